//go:build !unix

package metrics

// mapBytes is make where there is no anonymous mmap: the buffer is then on
// the Go heap, as before.
func mapBytes(n int) []byte { return make([]byte, n) }

func unmapBytes([]byte) {}
