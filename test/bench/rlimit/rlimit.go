// Package rlimit lifts the open-file limit for the benchmark's processes:
// 10,000 targets keep many connections open at once, in the harness, the
// daemon it starts and the bench server alike.
package rlimit

import "syscall"

// RaiseNoFile lifts the soft open-file limit to the hard one; children
// started afterwards inherit it.
func RaiseNoFile() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
