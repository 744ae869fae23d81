package kernel

// Constants of the Int loop: each of its four chains is the linear
// congruential step x = x*intMul + intAdd (mod 2^64), with Knuth's MMIX
// constants (both odd).
const (
	intMul = 6364136223846793005
	intAdd = 1442695040888963407
)

// intRef is the pure-Go reference of Int: n iterations of four independent
// chains x = x*intMul + intAdd, starting from 0, 1, 2 and 3, returning
// (x0+x1)+(x2+x3) (mod 2^64).
func intRef(n uint64) uint64 {
	x0, x1, x2, x3 := uint64(0), uint64(1), uint64(2), uint64(3)
	for ; n > 0; n-- {
		x0 = x0*intMul + intAdd
		x1 = x1*intMul + intAdd
		x2 = x2*intMul + intAdd
		x3 = x3*intMul + intAdd
	}
	return (x0 + x1) + (x2 + x3)
}
