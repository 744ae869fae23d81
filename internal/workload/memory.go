package workload

import "fmt"

// checkMemory refuses a compression size whose input (held in memory, so that
// reading it is never part of the timed work) would not fit comfortably.
func checkMemory(size int64, workloadName string) error {
	total := totalMemory()
	if total == 0 {
		return nil
	}
	if limit := total / 2; uint64(size) > limit {
		return fmt.Errorf("%s of %d bytes: the input is held in memory and this machine has %d bytes; allowed up to %d (half of it)", workloadName, size, total, limit)
	}
	return nil
}
