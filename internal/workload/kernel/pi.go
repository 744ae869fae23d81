package kernel

import "math/bits"

// PiRNG is the random number generator of the pi workload: xoshiro256**
// (Blackman and Vigna), one per thread. It is a plain value: copy it into
// each thread, and don't share one between threads.
type PiRNG struct {
	s0, s1, s2, s3 uint64
}

// NewPiRNG returns the generator of thread stream for run seed. Its state is
// filled by splitmix64 from a starting point that mixes seed and stream with
// a bijection, so different streams of one seed get different states, and
// the same seed and stream always give the same sequence.
func NewPiRNG(seed uint64, stream int) PiRNG {
	sm := mix64(seed ^ mix64(uint64(stream)+0x9e3779b97f4a7c15))
	return PiRNG{
		s0: splitmix64(&sm),
		s1: splitmix64(&sm),
		s2: splitmix64(&sm),
		s3: splitmix64(&sm),
	}
}

// mix64 is splitmix64's output function, a bijection on uint64.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	return mix64(*state)
}

// Uint64 returns the next 64 random bits.
func (r *PiRNG) Uint64() uint64 {
	result := bits.RotateLeft64(r.s1*5, 7) * 9
	t := r.s1 << 17
	r.s2 ^= r.s0
	r.s3 ^= r.s1
	r.s1 ^= r.s2
	r.s0 ^= r.s3
	r.s2 ^= t
	r.s3 = bits.RotateLeft64(r.s3, 45)
	return result
}

// PiHits draws n uniform points in the unit square and returns how many fall
// inside the quarter circle x*x + y*y < 1. Each point takes one 64-bit draw
// from r: the high 32 bits scaled to [0, 1) are x, the low 32 bits y.
func PiHits(r *PiRNG, n uint64) uint64 {
	const scale = 1.0 / (1 << 32)
	s0, s1, s2, s3 := r.s0, r.s1, r.s2, r.s3 // in registers for the loop
	var hits uint64
	for ; n > 0; n-- {
		u := bits.RotateLeft64(s1*5, 7) * 9
		t := s1 << 17
		s2 ^= s0
		s3 ^= s1
		s1 ^= s2
		s0 ^= s3
		s2 ^= t
		s3 = bits.RotateLeft64(s3, 45)

		x := float64(u>>32) * scale
		y := float64(uint32(u)) * scale
		if x*x+y*y < 1 {
			hits++
		}
	}
	r.s0, r.s1, r.s2, r.s3 = s0, s1, s2, s3
	return hits
}

// PiEstimate returns the estimate of pi from hits inside the quarter circle
// out of total points: 4*hits/total, or 0 when total is 0.
func PiEstimate(hits, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return 4 * float64(hits) / float64(total)
}
