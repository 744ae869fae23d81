package telemetry

import "fmt"

// UnavailableError says a sampler cannot run on this machine, why, and what
// the user can do about it. It is not a failure of the run: the caller goes
// on without telemetry and the report says telemetry was unavailable, quoting
// Reason and Fix (errors.As finds it through wrapping).
type UnavailableError struct {
	// Sampler is the sampler that cannot run (SamplerPowermetrics...).
	Sampler string
	// Reason is what is missing ("qoslab runs as uid 501, powermetrics
	// needs root").
	Reason string
	// Fix is what to do to enable the sampler, written for a person at a
	// terminal; empty when nothing can be done.
	Fix string
}

func (e *UnavailableError) Error() string {
	msg := fmt.Sprintf("%s telemetry unavailable: %s", e.Sampler, e.Reason)
	if e.Fix != "" {
		msg += ". To enable it: " + e.Fix
	}
	return msg
}
