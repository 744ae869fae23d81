//go:build amd64 || arm64

package kernel

// FP runs n iterations of a register-only floating-point loop: four
// independent chains x = x*fpMul + fpAdd (MULSD+ADDSD on amd64, FMADD on
// arm64), with no load or store inside the loop. It returns (x0+x1)+(x2+x3),
// the same bits as fpRef(n).
func FP(n uint64) float64

// Int runs n iterations of a register-only integer loop: four independent
// chains x = x*intMul + intAdd (IMULQ+ADDQ on amd64, MADD on arm64), with no
// load or store inside the loop. It returns the same value as intRef(n).
func Int(n uint64) uint64
