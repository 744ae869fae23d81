//go:build !linux && !darwin

package telemetry

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// NewLocalProbe has no sampler to offer off Linux and macOS.
func NewLocalProbe(_ context.Context, _ time.Duration) (Probe, error) {
	return nil, &UnavailableError{Reason: fmt.Sprintf("qoslab samples telemetry on Linux and macOS, not %s", runtime.GOOS)}
}
