//go:build !amd64 && !arm64

package kernel

// FP runs n iterations of a floating-point loop: four independent chains
// x = x*fpMul + fpAdd. On this architecture it is the pure-Go fpRef.
func FP(n uint64) float64 { return FPRef(n) }

// Int runs n iterations of an integer loop: four independent chains
// x = x*intMul + intAdd. On this architecture it is the pure-Go intRef.
func Int(n uint64) uint64 { return IntRef(n) }
