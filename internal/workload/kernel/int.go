package kernel

// Constants of the Int loop: each of its four chains is the linear
// congruential step x = x*IntMul + IntAdd (mod 2^64), with Knuth's MMIX
// constants (both odd).
const (
	IntMul = 6364136223846793005
	IntAdd = 1442695040888963407
)

// IntRef is the pure-Go reference of Int: n iterations of four independent
// chains x = x*IntMul + IntAdd, starting from 0, 1, 2 and 3, returning
// (x0+x1)+(x2+x3) (mod 2^64).
func IntRef(n uint64) uint64 {
	x0, x1, x2, x3 := uint64(0), uint64(1), uint64(2), uint64(3)
	for ; n > 0; n-- {
		x0 = x0*IntMul + IntAdd
		x1 = x1*IntMul + IntAdd
		x2 = x2*IntMul + IntAdd
		x3 = x3*IntMul + IntAdd
	}
	return (x0 + x1) + (x2 + x3)
}
