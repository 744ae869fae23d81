package telemetry

import (
	"context"
	"time"
)

// NewLocalProbe returns this machine's sampler: on Linux, /proc and /sys.
func NewLocalProbe(_ context.Context, _ time.Duration) (Probe, error) {
	return newProcProbe(procOptions{})
}
