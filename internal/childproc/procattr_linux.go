package childproc

import "syscall"

// helperProcAttr: a process group of its own, so a terminal's Ctrl-C reaches
// only qoslab, which then stops the child in order; and SIGKILL when qoslab
// dies (when the thread that forked it ends, which is why Start forks from
// a thread that lives as long as the child).
func helperProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
