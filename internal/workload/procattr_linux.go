package workload

import "syscall"

// workerProcAttr makes a worker die with the agent, so no process outlives a cell.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
