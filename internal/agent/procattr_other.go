//go:build !linux

package agent

import "syscall"

// childProcAttr: its own process group; off Linux the agent also ends when
// its stdin (the controller's pipe) closes.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
