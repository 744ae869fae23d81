package experiment

import "syscall"

// childProcAttr: a helper process in its own process group (Ctrl-C reaches only
// qoslab, which stops it) that dies with qoslab.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
