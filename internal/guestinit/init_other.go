//go:build !linux

package guestinit

import (
	"fmt"
	"os"
	"runtime"
)

// Applies reports whether the agent binary must run Main: only ever on
// Linux, the one OS whose guests boot the agent as init.
func Applies(pid int, args []string) bool { return false }

// Main fails: the guest init runs on Linux only.
func Main(args []string) int {
	fmt.Fprintf(os.Stderr, "qoslab-agent: the guest init runs on linux, not %s\n", runtime.GOOS)
	return 1
}
