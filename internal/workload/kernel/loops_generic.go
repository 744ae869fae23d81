//go:build !amd64 && !arm64

package kernel

// FP runs n iterations of a floating-point loop: four independent chains
// x = x*FPMul + FPAdd. On this architecture it is the pure-Go FPRef.
func FP(n uint64) float64 { return FPRef(n) }

// Int runs n iterations of an integer loop: four independent chains
// x = x*IntMul + IntAdd. On this architecture it is the pure-Go IntRef.
func Int(n uint64) uint64 { return IntRef(n) }
