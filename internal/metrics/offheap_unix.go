//go:build unix

package metrics

import "syscall"

// mapBytes returns n bytes of zeroed anonymous memory outside the Go heap,
// or nil if the kernel refuses them; unmapBytes gives them back.
func mapBytes(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}

func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
