// Package prefault makes the heap's first pages present before a one-shot
// command (driftd check, driftd capture) writes them, from the other core,
// while this one runs the program's initialisation and the probe.
//
// A short-lived process writes every page of its heap for the first time,
// and on some virtual machines the first write is far dearer than the
// work done on the page: on the 2-core machines the benchmarks run on, a
// page fault takes 10–15 µs, and a check takes some 600 on its heap.
// Made present with MADV_POPULATE_WRITE (one system call a range, under
// 1 µs a page) and read once by this package's goroutine, a page then
// costs its first writer nothing more. The goroutine only asks the kernel
// to populate and reads, in assembly: it never writes, and no Go pointer
// ever holds an address it reads, so nothing the allocator puts on a page
// is touched and the collector never sees one.
//
// Before the heap, the goroutine maps the executable's code and read-only
// data into the page tables in one call (MADV_POPULATE_READ), if the file
// is in the page cache already: the first reads would otherwise map it 16
// pages a fault.
//
// Importing the package starts it, from its init, as early as the program
// allows: the package imports nothing that initialises late (not os). It
// does nothing for any other command (the daemon's heap lives long, and
// its first pages are a rounding error), on kernels without
// MADV_POPULATE_WRITE (before Linux 5.14, where a read alone would map the
// zero page and make the first write fault twice), outside linux/amd64
// and linux/arm64, with a single processor (GOMAXPROCS=1: there is no
// other core), with GODEBUG=efence=1 (freed memory made unreadable), or
// when DRIFTD_PREFAULT=0.
package prefault

import (
	"bytes"
	"slices"
	"strings"
)

// Limit is how much of the heap, from the first object this package
// allocates upward, is made present: about what a check of a 50-tool
// server writes, bodies and parsed definitions included. What is not
// used costs a one-shot process at most this much resident memory.
const Limit = 3 << 20

// chunk is how much is populated, then read, at a time, so that the
// lowest pages, which the allocator reaches first, are ready first.
const chunk = 64 << 10

// commands are the first arguments that make a one-shot probe.
var commands = []string{"check", "capture"}

// Started reports whether this process started the prefault goroutine,
// for tests.
var Started bool

// oneShot says whether a NUL-separated command line runs a command of
// commands: its first argument after the program's name.
func oneShot(cmdline []byte) bool {
	args := bytes.SplitN(cmdline, []byte{0}, 3)
	return len(args) >= 2 && slices.Contains(commands, string(args[1]))
}

// heapRange finds, in /proc/self/maps, the writable anonymous mapping that
// holds addr, with the writable anonymous mappings right after it (the Go
// runtime names parts of its heap "[anon: Go: …]" where the kernel lets
// it, which splits one mapping into several), and returns from addr's
// page (of size page) up to Limit of them.
func heapRange(maps []byte, addr, page uintptr) (lo, hi uintptr, ok bool) {
	var end uintptr // lo and end stay 0 until the mapping holding addr is found
	for line := range bytes.SplitSeq(maps, []byte{'\n'}) {
		start, stop, anon := anonymousRW(line)
		if ok && (!anon || start != end) {
			break // the first mapping not adjoining ends it
		}
		if ok {
			end = stop
		} else if anon && start <= addr && addr < stop {
			lo, end, ok = addr&^(page-1), stop, true
		}
	}
	return lo, min(end, lo+Limit), ok
}

// anonymousRW parses a line of /proc/self/maps: its range, and whether it
// is private, readable and writable memory of no file (no path, or a name
// "[anon:…]" a program gave it).
func anonymousRW(line []byte) (start, end uintptr, ok bool) {
	m, ok := parseMapping(line)
	ok = ok && m.perms == "rw-p" && (len(m.rest) == 0 || bytes.HasPrefix(m.rest[0], []byte("[anon:")))
	return m.start, m.end, ok
}

// exeRanges returns, from /proc/self/maps, the read-only mappings of the
// executable at path exe: its code, and its read-only data and tables.
func exeRanges(maps, exe []byte) [][2]uintptr {
	var out [][2]uintptr
	for line := range bytes.SplitSeq(maps, []byte{'\n'}) {
		m, ok := parseMapping(line)
		if ok && (m.perms == "r-xp" || m.perms == "r--p") && len(m.rest) == 1 && bytes.Equal(m.rest[0], exe) {
			out = append(out, [2]uintptr{m.start, m.end})
		}
	}
	return out
}

// mapping is a line of /proc/self/maps: its range, its permissions, and
// the fields after the inode (a path, a name, or none), split at spaces.
type mapping struct {
	start, end uintptr
	perms      string
	rest       [][]byte
}

// parseMapping parses a line of /proc/self/maps; ok is false for a line
// without its five fields or with a range that does not parse.
func parseMapping(line []byte) (m mapping, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 5 {
		return mapping{}, false
	}
	a, z, found := bytes.Cut(f[0], []byte{'-'})
	start, ok1 := parseHex(a)
	end, ok2 := parseHex(z)
	if !found || !ok1 || !ok2 || start >= end {
		return mapping{}, false
	}
	return mapping{start: start, end: end, perms: string(f[1]), rest: f[5:]}, true
}

// mostlyCached says whether a mincore vector has nine pages of ten in the
// page cache.
func mostlyCached(vec []byte) bool {
	cached := 0
	for _, v := range vec {
		cached += int(v & 1)
	}
	return len(vec) > 0 && cached >= len(vec)*9/10
}

// efence says whether a GODEBUG value turns on the runtime's efence mode,
// in which freed memory is made inaccessible: the heap can then hold
// pages no goroutine may read, and the prefault stays off.
func efence(godebug string) bool {
	on := false
	for kv := range strings.SplitSeq(godebug, ",") {
		if k, v, _ := strings.Cut(kv, "="); k == "efence" {
			on = v != "0" // the last setting wins, as in the runtime
		}
	}
	return on
}

func parseHex(b []byte) (uintptr, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uintptr
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
