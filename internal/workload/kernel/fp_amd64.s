#include "textflag.h"

// func FP(n uint64) float64
//
// Four independent chains x = x*0.5 + 1.0 with MULSD+ADDSD (baseline amd64
// has no FMA). The constants and chains live in X0-X5; the loop between
// "loop" and "JNZ loop" touches no memory. Must match fpRef and
// scripts/fpref/fp.c.
TEXT ·FP(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	MOVQ $0x3FE0000000000000, AX // 0.5
	MOVQ AX, X4
	MOVQ $0x3FF0000000000000, AX // 1.0
	MOVQ AX, X5
	XORPS X0, X0                 // x0 = 0.0
	MOVAPS X5, X1                // x1 = 1.0
	MOVQ $0x4008000000000000, AX // x2 = 3.0
	MOVQ AX, X2
	MOVQ $0x4018000000000000, AX // x3 = 6.0
	MOVQ AX, X3
	TESTQ CX, CX
	JZ done

loop:
	MULSD X4, X0
	ADDSD X5, X0
	MULSD X4, X1
	ADDSD X5, X1
	MULSD X4, X2
	ADDSD X5, X2
	MULSD X4, X3
	ADDSD X5, X3
	DECQ CX
	JNZ loop

done:
	ADDSD X1, X0 // x0 + x1
	ADDSD X3, X2 // x2 + x3
	ADDSD X2, X0
	MOVSD X0, ret+8(FP)
	RET
