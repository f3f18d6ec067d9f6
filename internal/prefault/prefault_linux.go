//go:build linux && (amd64 || arm64)

package prefault

import (
	"runtime"
	"syscall"
	"unsafe"
)

// MADV_POPULATE_READ and MADV_POPULATE_WRITE (Linux 5.14).
const (
	madvPopulateRead  = 22
	madvPopulateWrite = 23
)

// touch reads one byte of each of n pages from addr, size bytes apart
// (touch_*.s): in assembly, so that no Go pointer ever holds an address
// the allocator has not handed out.
//
//go:noescape
func touch(addr, n, size uintptr)

var anchor *[64]byte // the first object, to find the heap by

func init() {
	if v, ok := syscall.Getenv("DRIFTD_PREFAULT"); ok && v == "0" {
		return
	}
	if v, _ := syscall.Getenv("GODEBUG"); efence(v) {
		return // freed memory made unreadable: a read could fault
	}
	// Only the first argument is needed, and this runs before the rest of
	// the program: the first 4 KiB of the command line, on the stack.
	var cmdline [4 << 10]byte
	if runtime.GOMAXPROCS(0) < 2 || !oneShot(readInto("/proc/self/cmdline", cmdline[:])) {
		return
	}
	anchor = new([64]byte)
	Started = true
	go start(uintptr(unsafe.Pointer(anchor)), uintptr(syscall.Getpagesize()))
}

// start maps the executable's code and read-only data in, then finds the
// heap from the address of an object on it and populates it: from the
// other core, as everything after the command line is.
func start(addr, page uintptr) {
	maps := readFile("/proc/self/maps")
	var exe [4 << 10]byte
	if n, err := syscall.Readlink("/proc/self/exe", exe[:]); err == nil {
		for _, r := range exeRanges(maps, exe[:n]) {
			mapIn(r[0], r[1], page)
		}
	}
	if lo, hi, ok := heapRange(maps, addr, page); ok {
		populate(lo, hi, page)
	}
}

// mapIn maps [lo, hi), read-only pages of the executable, into the page
// tables at once (MADV_POPULATE_READ, about 0.2 µs a page), which the
// first reads would otherwise do 16 pages a fault: about 1 ms of a check's
// start, for 1 ms of the other core. Only when the file is (almost) all in
// the page cache already: the first start after a deploy reads it from
// disk as it needs it, not all 20 MB at once.
func mapIn(lo, hi, page uintptr) {
	vec := make([]byte, (hi-lo+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return
	}
	if !mostlyCached(vec) {
		return
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPopulateRead)
}

// populate makes [lo, hi) present a chunk at a time, lowest first, and
// reads each page once, so that the first write by another thread finds
// it mapped. It stops at the first refusal: reading a page the kernel
// did not populate would map the zero page in its place.
func populate(lo, hi, page uintptr) {
	for c := lo; c < hi; c += chunk {
		n := min(chunk, hi-c)
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, c, n, madvPopulateWrite); e != 0 {
			return
		}
		touch(c, (n+page-1)/page, page)
	}
}

// readInto reads the start of a file into buf, with system calls only
// (package os initialises late), and returns what it read.
func readInto(name string, buf []byte) []byte {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		k, err := syscall.Read(fd, buf[n:])
		if k <= 0 || err != nil {
			break
		}
		n += k
	}
	return buf[:n]
}

// readFile reads a small file whole (/proc/self/maps: a few KiB).
func readFile(name string) []byte {
	buf := make([]byte, 64<<10)
	for {
		b := readInto(name, buf)
		if len(b) < len(buf) {
			return b
		}
		buf = make([]byte, 2*len(buf))
	}
}
