//go:build linux && (amd64 || arm64)

package prefault

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestMain answers, in a child started by TestStartsForOneShot, whether
// the init started the goroutine.
func TestMain(m *testing.M) {
	if os.Getenv("PREFAULT_CHILD") == "1" {
		fmt.Println(Started)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStartsForOneShot runs this test binary as driftd would be run: the
// init starts the goroutine for check and capture only, and never when
// DRIFTD_PREFAULT=0, with one processor or under GODEBUG=efence=1.
func TestStartsForOneShot(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"check", "m.json"}, nil, "true"},
		{[]string{"capture"}, nil, "true"},
		{[]string{"run", "--config.file=c.yml"}, nil, "false"},
		{[]string{"check"}, []string{"DRIFTD_PREFAULT=0"}, "false"},
		{[]string{"check"}, []string{"GOMAXPROCS=1"}, "false"},
		{[]string{"check"}, []string{"GODEBUG=efence=1"}, "false"},
	} {
		cmd := exec.Command(os.Args[0], tc.args...)
		cmd.Env = append(append(os.Environ(), "PREFAULT_CHILD=1", "GOMAXPROCS=2"), tc.env...)
		out, err := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != tc.want {
			t.Errorf("%v %v: started %q (%v), want %s", tc.args, tc.env, got, err, tc.want)
		}
	}
}

// mapT maps length bytes (of fd, or anonymous memory for -1) for the
// test's lifetime.
func mapT(t *testing.T, fd, length, prot, flags int) []byte {
	t.Helper()
	b, err := syscall.Mmap(fd, 0, length, prot, flags)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(b) })
	return b
}

// needAdvice skips the test when the kernel refuses advice on b's first
// page (MADV_POPULATE_* are Linux 5.14's): then the prefault rightly does
// nothing.
func needAdvice(t *testing.T, b []byte, advice int, name string) {
	t.Helper()
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(syscall.Getpagesize()), uintptr(advice)); e != 0 {
		t.Skipf("%s: %v (Linux before 5.14?)", name, e)
	}
}

// minflt is the calling thread's minor page faults so far.
func minflt(t *testing.T) int64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Minflt
}

// TestPopulate maps fresh anonymous memory, lets populate make it
// present, and then writes every page: the writes take no page fault,
// where the same writes to memory populate did not see take one a page.
func TestPopulate(t *testing.T) {
	runtime.LockOSThread() // the faults counted are this thread's
	defer runtime.UnlockOSThread()
	page := syscall.Getpagesize()
	const pages = 64 // more than one chunk
	fresh := func() []byte {
		return mapT(t, -1, pages*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	}
	write := func(b []byte) int64 {
		before := minflt(t)
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		return minflt(t) - before
	}
	needAdvice(t, fresh(), madvPopulateWrite, "MADV_POPULATE_WRITE")

	plain := fresh()
	if n := write(plain); n < pages/2 {
		t.Fatalf("writing %d fresh pages took %d faults: the measure does not see faults", pages, n)
	}
	b := fresh()
	lo := uintptr(unsafe.Pointer(&b[0]))
	populate(lo, lo+uintptr(len(b)), uintptr(page))
	if n := write(b); n > 2 {
		t.Errorf("writing %d populated pages took %d faults, want none", pages, n)
	}
	for i := 0; i < len(b); i += page {
		if b[i] != 1 {
			t.Fatalf("page %d reads %d after the write", i/page, b[i])
		}
	}
}

var readSink int // what the reads read, so that they are not left out

// TestMapIn maps a file in the page cache, lets mapIn map it into the
// page tables, and reads every page: the reads take no page fault, where
// reading a second mapping of the same file takes some (16 pages a fault).
func TestMapIn(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	page := syscall.Getpagesize()
	const pages = 256
	name := t.TempDir() + "/exe"
	data := make([]byte, pages*page)
	for i := range data {
		data[i] = byte(i / page)
	}
	if err := os.WriteFile(name, data, 0o600); err != nil { // in the page cache now
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapping := func() []byte {
		return mapT(t, int(f.Fd()), len(data), syscall.PROT_READ, syscall.MAP_PRIVATE)
	}
	read := func(b []byte) (faults int64) {
		before := minflt(t)
		for i := 0; i < len(b); i += page {
			readSink += int(b[i])
		}
		return minflt(t) - before
	}
	needAdvice(t, mapping(), madvPopulateRead, "MADV_POPULATE_READ")
	if n := read(mapping()); n == 0 {
		t.Fatalf("reading %d pages of a fresh mapping took no fault: the measure does not see faults", pages)
	}
	b := mapping()
	lo := uintptr(unsafe.Pointer(&b[0]))
	mapIn(lo, lo+uintptr(len(b)), uintptr(page))
	if n := read(b); n > 0 {
		t.Errorf("reading %d pages mapped in took %d faults, want none", pages, n)
	}
	for i := 0; i < len(b); i += page {
		if b[i] != byte(i/page) {
			t.Fatalf("page %d reads %d", i/page, b[i])
		}
	}
}

// TestPopulateStopsOnRefusal: a range the kernel will not populate (here,
// mapped without write permission) is left alone, not read: a read would
// map the zero page there. (Reading PROT_NONE would crash the test.)
func TestPopulateStopsOnRefusal(t *testing.T) {
	page := syscall.Getpagesize()
	b := mapT(t, -1, 4*page, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	lo := uintptr(unsafe.Pointer(&b[0]))
	populate(lo, lo+uintptr(len(b)), uintptr(page)) // returns, no SIGSEGV
}

// TestHeapRangeOfThisProcess finds this process's heap from a heap
// object, as the init does.
func TestHeapRangeOfThisProcess(t *testing.T) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	obj := new([64]byte)
	addr := uintptr(unsafe.Pointer(obj))
	page := uintptr(syscall.Getpagesize())
	lo, hi, ok := heapRange(maps, addr, page)
	if !ok || lo > addr || addr >= hi || lo%page != 0 || hi-lo > Limit {
		t.Fatalf("heapRange(%#x) = %#x, %#x, %v", addr, lo, hi, ok)
	}
	if got := readFile("/proc/self/maps"); len(got) == 0 {
		t.Error("readFile read nothing of /proc/self/maps")
	}
	if Started {
		t.Error("the prefault goroutine started in a test binary, whose first argument is not check or capture")
	}
}
