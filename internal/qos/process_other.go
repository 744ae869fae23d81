//go:build !darwin

package qos

import (
	"fmt"
	"runtime"
)

// BackgroundProcess is macOS's (PRIO_DARWIN_BG); elsewhere it refuses.
func BackgroundProcess(pid int) (int, error) {
	return 0, fmt.Errorf("process %d: PRIO_DARWIN_BG is macOS's; %s has no background band for a whole process", pid, runtime.GOOS)
}
