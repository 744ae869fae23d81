#include "textflag.h"

// func Int(n uint64) uint64
//
// Four independent chains x = x*intMul + intAdd (mod 2^64) with MADD
// (MADD Rm, Ra, Rn, Rd computes Rd = Ra + Rn*Rm). The constants and chains
// live in R2-R7; the loop between "loop" and "BNE loop" touches no memory.
// Must match intRef.
TEXT ·Int(SB), NOSPLIT, $0-16
	MOVD n+0(FP), R0
	MOVD $6364136223846793005, R2 // intMul
	MOVD $1442695040888963407, R3 // intAdd
	MOVD ZR, R4                   // x0 = 0
	MOVD $1, R5                   // x1 = 1
	MOVD $2, R6                   // x2 = 2
	MOVD $3, R7                   // x3 = 3
	CBZ R0, done

loop:
	MADD R2, R3, R4, R4
	MADD R2, R3, R5, R5
	MADD R2, R3, R6, R6
	MADD R2, R3, R7, R7
	SUBS $1, R0, R0
	BNE loop

done:
	ADD R5, R4 // x0 + x1
	ADD R7, R6 // x2 + x3
	ADD R6, R4
	MOVD R4, ret+8(FP)
	RET
