package workload

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// AllowedCPUs returns the CPUs this process may run on (sched_getaffinity),
// in ascending order: a cpuset or `taskset` around qoslab narrows them.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return cpuList(&set), nil
}

// pinSelf binds the calling OS thread (the caller has locked its goroutine
// to it) to cpu and returns the CPUs the kernel then reports for it.
func pinSelf(cpu int) ([]int, error) {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_setaffinity to CPU %d: %w", cpu, err)
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(0, &got); err != nil {
		return nil, fmt.Errorf("sched_getaffinity after pinning: %w", err)
	}
	return cpuList(&got), nil
}

func cpuList(set *unix.CPUSet) []int {
	var out []int
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if set.IsSet(cpu) {
			out = append(out, cpu)
		}
	}
	return out
}
