package kernel

import "math"

// Constants of the FP loop. Each of its four chains is x = x*fpMul + fpAdd,
// which converges to 2 from any start, so the values stay normal (no
// overflow, no denormals) however long the loop runs. scripts/fpref/fp.c uses
// the same constants, starting values and operation order.
const (
	fpMul = 0.5
	fpAdd = 1.0
)

// fpRef is the pure-Go reference of FP: n iterations of four independent
// chains x = x*fpMul + fpAdd, starting from 0, 1, 3 and 6, returning
// (x0+x1)+(x2+x3).
//
// On arm64, where the assembly uses the fused FMADD, the reference fuses too
// (math.FMA); elsewhere it rounds the product before the addition, as MULSD
// followed by ADDSD does. (With fpMul = 0.5 the product is exact, so both
// give the same bits anyway.)
func fpRef(n uint64) float64 {
	x0, x1, x2, x3 := 0.0, 1.0, 3.0, 6.0
	for ; n > 0; n-- {
		x0 = fpStep(x0)
		x1 = fpStep(x1)
		x2 = fpStep(x2)
		x3 = fpStep(x3)
	}
	return (x0 + x1) + (x2 + x3)
}

func fpStep(x float64) float64 {
	if fpFused {
		return math.FMA(x, fpMul, fpAdd)
	}
	// The explicit conversion forbids the compiler from fusing.
	return float64(x*fpMul) + fpAdd
}
