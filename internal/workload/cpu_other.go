//go:build !linux

package workload

// currentCPU is unknown off Linux: darwin has no getcpu for user threads.
func currentCPU() (int, bool) { return 0, false }

// currentTID is 0 off Linux: the darwin sampler (powermetrics) reports per
// CPU, not per thread, so no thread id is needed there.
func currentTID() int { return 0 }
