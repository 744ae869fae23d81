//go:build linux || darwin

package workload

import "golang.org/x/sys/unix"

// monoNow reads CLOCK_MONOTONIC in ns. It is system-wide, so worker processes'
// instants compare with the parent's (Go's time.Time hides its monotonic reading).
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}
