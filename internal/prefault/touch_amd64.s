//go:build linux

#include "textflag.h"

// func touch(addr, n, size uintptr)
TEXT ·touch(SB), NOSPLIT, $0-24
	MOVQ addr+0(FP), AX
	MOVQ n+8(FP), CX
	MOVQ size+16(FP), DX
loop:
	TESTQ CX, CX
	JZ   done
	MOVB (AX), BX
	ADDQ DX, AX
	DECQ CX
	JMP  loop
done:
	RET
