//go:build !linux

package telemetry

import "time"

// threadCPUTime is 0 where there is no per-thread getrusage: RecorderStats
// then reports no CPU time rather than a process-wide figure that would
// include the measured work.
func threadCPUTime() time.Duration { return 0 }
