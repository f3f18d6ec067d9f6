//go:build linux

#include "textflag.h"

// func touch(addr, n, size uintptr)
TEXT ·touch(SB), NOSPLIT, $0-24
	MOVD addr+0(FP), R0
	MOVD n+8(FP), R1
	MOVD size+16(FP), R2
loop:
	CBZ  R1, done
	MOVBU (R0), R3
	ADD  R2, R0
	SUB  $1, R1
	B    loop
done:
	RET
