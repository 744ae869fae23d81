//go:build !linux

package childproc

import "syscall"

// helperProcAttr: a process group of its own; off Linux there is no
// parent-death signal, and the child ends when its stdin (qoslab's pipe)
// closes.
func helperProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
