//go:build !linux

package workload

import "syscall"

// workerProcAttr: darwin has no parent-death signal; the agent kills its
// workers through the cell's context instead.
func workerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
