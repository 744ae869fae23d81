package agent

import "syscall"

// childProcAttr: the agent gets its own process group, so a terminal's Ctrl-C
// reaches only the controller, which then stops the agent in order; and it
// dies with the controller if the controller is killed.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
