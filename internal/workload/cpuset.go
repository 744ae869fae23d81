package workload

import "math/bits"

// cpuSet remembers which CPUs a thread was seen on. Its words are allocated
// before the measured interval; sample only sets bits.
type cpuSet struct{ words []uint64 }

func newCPUSet(ncpu int) cpuSet {
	if ncpu < 64 {
		ncpu = 64
	}
	return cpuSet{words: make([]uint64, (ncpu+63)/64)}
}

func (s *cpuSet) add(cpu int) {
	if w := cpu / 64; cpu >= 0 && w < len(s.words) {
		s.words[w] |= 1 << (cpu % 64)
	}
}

func (s *cpuSet) sample() {
	if cpu, ok := currentCPU(); ok {
		s.add(cpu)
	}
}

// list returns the CPUs in ascending order, nil when none was seen.
func (s *cpuSet) list() []int {
	var out []int
	for w, word := range s.words {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, w*64+b)
			word &^= 1 << b
		}
	}
	return out
}
