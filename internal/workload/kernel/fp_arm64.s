#include "textflag.h"

// func FP(n uint64) float64
//
// Four independent chains x = x*0.5 + 1.0 with FMADD (FMADDD Fm, Fa, Fn, Fd
// computes Fd = Fn*Fm + Fa). The constants and chains live in F0-F5; the loop
// between "loop" and "BNE loop" touches no memory. Must match fpRef (which
// uses math.FMA on arm64) and scripts/fpref/fp.c.
TEXT ·FP(SB), NOSPLIT, $0-16
	MOVD n+0(FP), R0
	FMOVD $0.5, F4  // fpMul
	FMOVD $1.0, F5  // fpAdd
	FMOVD ZR, F0    // x0 = 0.0
	FMOVD $1.0, F1  // x1 = 1.0
	FMOVD $3.0, F2  // x2 = 3.0
	FMOVD $6.0, F3  // x3 = 6.0
	CBZ R0, done

loop:
	FMADDD F4, F5, F0, F0
	FMADDD F4, F5, F1, F1
	FMADDD F4, F5, F2, F2
	FMADDD F4, F5, F3, F3
	SUBS $1, R0, R0
	BNE loop

done:
	FADDD F1, F0 // x0 + x1
	FADDD F3, F2 // x2 + x3
	FADDD F2, F0
	FMOVD F0, ret+8(FP)
	RET
