package telemetry

import (
	"context"
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

// waitSlice bounds one sleep, so that Stop is seen within it.
const waitSlice = 10 * time.Millisecond

// waiter sleeps the sampling thread in the kernel (nanosleep) rather than on
// a Go timer. A Go timer lives in one P's heap and fires when that P runs
// its timers; on a contended machine the P may be held by a measured worker
// thread that the kernel is starving (a background worker behind the
// contention), and the sample waits with it: up to a second was seen. A
// kernel sleep wakes this thread at its own priority, and the spare P the
// workload leaves (GOMAXPROCS above the workers) lets it run Go again.
type waiter struct{}

func newWaiter() waiter { return waiter{} }

func (waiter) close() {}

func (waiter) until(ctx context.Context, stop <-chan struct{}, next time.Time) waitOutcome {
	for {
		if o, done := pollStop(ctx, stop); done {
			return o
		}
		d := time.Until(next)
		if d <= 0 {
			return waitDeadline
		}
		ts := unix.NsecToTimespec(int64(min(d, waitSlice)))
		// EINTR (a signal, Go's preemption among them) only shortens the
		// slice; the loop sleeps again for what is left.
		_ = unix.Nanosleep(&ts, nil)
	}
}
