//go:build !linux

package workload

// currentCPU is unknown off Linux: darwin has no getcpu for user threads.
func currentCPU() (int, bool) { return 0, false }
