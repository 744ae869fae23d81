//go:build !darwin

package telemetry

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// newPowermetricsProbe returns an *UnavailableError off macOS, so that
// callers choose samplers without build tags of their own.
func newPowermetricsProbe(ctx context.Context, interval time.Duration) (Probe, error) {
	return nil, &UnavailableError{
		Sampler: SamplerPowermetrics,
		Reason:  fmt.Sprintf("powermetrics exists only on macOS, not %s", runtime.GOOS),
		Fix:     "none needed here: on Linux qoslab samples /proc and /sys instead",
	}
}
