//go:build darwin

package qos

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// <sys/resource.h>'s Darwin extensions of setpriority: PRIO_DARWIN_PROCESS
// names a process by pid, and PRIO_DARWIN_BG puts it in the background
// band (0 takes it out).
const (
	prioDarwinProcess = 4
	prioDarwinBG      = 0x1000
)

// BackgroundProcess puts process pid in the background band with
// setpriority(PRIO_DARWIN_PROCESS, pid, PRIO_DARWIN_BG), as `taskpolicy -b
// -p PID` does, and reads it back with getpriority(PRIO_DARWIN_PROCESS,
// pid): nonzero once the process is in the band. XNU allows it on a
// process of the same user (or as root). The band is the background
// class's: its threads run on the efficiency cores, with their CPU and
// I/O throttled.
func BackgroundProcess(pid int) (readBack int, err error) {
	if pid <= 0 {
		return 0, fmt.Errorf("pid %d: want a process id above 0", pid)
	}
	if err := unix.Setpriority(prioDarwinProcess, pid, prioDarwinBG); err != nil {
		return 0, fmt.Errorf("setpriority(PRIO_DARWIN_PROCESS, %d, PRIO_DARWIN_BG): %w", pid, err)
	}
	got, err := unix.Getpriority(prioDarwinProcess, pid)
	if err != nil {
		return 0, fmt.Errorf("getpriority(PRIO_DARWIN_PROCESS, %d): %w", pid, err)
	}
	if got == 0 {
		return 0, fmt.Errorf("process %d: setpriority(PRIO_DARWIN_BG) succeeded but getpriority(PRIO_DARWIN_PROCESS) reads 0, not in the background band", pid)
	}
	return got, nil
}
