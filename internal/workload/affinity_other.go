//go:build !linux

package workload

import (
	"errors"
	"runtime"
)

// errNoAffinity is why spinners are not pinned off Linux: macOS has no call
// that binds a thread to a CPU (its affinity tags are hints, unsupported on
// Apple silicon), so the scheduler places them.
var errNoAffinity = errors.New("this OS has no CPU affinity for threads (macOS affinity tags are hints, unsupported on Apple silicon)")

// AllowedCPUs returns 0..NumCPU-1: off Linux no affinity mask narrows them.
func AllowedCPUs() ([]int, error) {
	out := make([]int, runtime.NumCPU())
	for i := range out {
		out[i] = i
	}
	return out, nil
}

func pinSelf(cpu int) ([]int, error) { return nil, errNoAffinity }
