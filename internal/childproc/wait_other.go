//go:build !linux

package childproc

import "os/exec"

// hasDeathSignal: only Linux has a parent-death signal.
func hasDeathSignal(*exec.Cmd) bool { return false }

func exitWaiter(int) func() { return func() {} }
