//go:build !linux

package experiment

import "syscall"

// childProcAttr: its own process group; off Linux it ends when its stdin closes.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
