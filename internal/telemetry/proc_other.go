//go:build !linux

package telemetry

import (
	"fmt"
	"runtime"
)

// NewProcProbe returns an *UnavailableError off Linux: /proc and /sys are
// Linux's. It is here so that callers choose samplers without build tags of
// their own.
func NewProcProbe(ProcOptions) (Probe, error) {
	return nil, &UnavailableError{
		Sampler: SamplerProc,
		Reason:  fmt.Sprintf("/proc and /sys exist only on Linux, not %s", runtime.GOOS),
		Fix:     "none needed here: on macOS qoslab samples powermetrics instead",
	}
}
