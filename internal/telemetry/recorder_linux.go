package telemetry

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUTime is the calling OS thread's CPU time; the caller must be
// locked to its thread for two readings to be comparable. It reads
// CLOCK_THREAD_CPUTIME_ID rather than getrusage(RUSAGE_THREAD): both come
// from the scheduler's run time, but the clock gives it exactly, in ns, where
// getrusage scales it into user and system parts in µs.
func threadCPUTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
