package telemetry

import (
	"context"
	"time"
)

// NewLocalProbe returns this machine's sampler: on macOS, powermetrics (it
// needs root; without it the error is an *UnavailableError saying how to
// enable it).
func NewLocalProbe(ctx context.Context, interval time.Duration) (Probe, error) {
	return newPowermetricsProbe(ctx, interval)
}
