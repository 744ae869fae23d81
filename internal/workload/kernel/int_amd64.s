#include "textflag.h"

// func Int(n uint64) uint64
//
// Four independent chains x = x*intMul + intAdd (mod 2^64) with IMULQ+ADDQ.
// The constants and chains live in AX, BX, DX, SI, R8, R9; the loop between
// "loop" and "JNZ loop" touches no memory. Must match intRef.
TEXT ·Int(SB), NOSPLIT, $0-16
	MOVQ n+0(FP), CX
	MOVQ $6364136223846793005, R8 // intMul
	MOVQ $1442695040888963407, R9 // intAdd
	XORL AX, AX                   // x0 = 0
	MOVL $1, BX                   // x1 = 1
	MOVL $2, DX                   // x2 = 2
	MOVL $3, SI                   // x3 = 3
	TESTQ CX, CX
	JZ done

loop:
	IMULQ R8, AX
	ADDQ R9, AX
	IMULQ R8, BX
	ADDQ R9, BX
	IMULQ R8, DX
	ADDQ R9, DX
	IMULQ R8, SI
	ADDQ R9, SI
	DECQ CX
	JNZ loop

done:
	ADDQ BX, AX // x0 + x1
	ADDQ SI, DX // x2 + x3
	ADDQ DX, AX
	MOVQ AX, ret+8(FP)
	RET
