//go:build !linux

package telemetry

import (
	"context"
	"time"
)

// threadCPUTime is 0 where there is no per-thread getrusage: RecorderStats
// then reports no CPU time rather than a process-wide figure that would
// include the measured work.
func threadCPUTime() time.Duration { return 0 }

// waiter waits on a Go timer: where the kernel-sleep waiter of Linux is not
// built (macOS samples through powermetrics, whose own process keeps time).
type waiter struct{ timer *time.Timer }

func newWaiter() *waiter {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{timer: t}
}

func (w *waiter) close() { w.timer.Stop() }

func (w *waiter) until(ctx context.Context, stop <-chan struct{}, next time.Time) waitOutcome {
	w.timer.Reset(time.Until(next))
	select {
	case <-ctx.Done():
		return waitCancelled
	case <-stop:
		return waitStopped
	case <-w.timer.C:
		return waitDeadline
	}
}
