package prefault

import "testing"

func TestOneShot(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		want    bool
	}{
		{"driftd\x00check\x00m.json\x00--base-url\x00http://x/mcp\x00", true},
		{"/usr/bin/driftd\x00capture\x00--base-url\x00http://x/mcp\x00", true},
		{"driftd\x00run\x00--config.file\x00c.yml\x00", false},
		{"driftd\x00--log.level=debug\x00check\x00m.json\x00", false}, // a flag first: not worth parsing
		{"driftd\x00checkx\x00", false},
		{"driftd\x00", false},
		{"", false},
	} {
		if got := oneShot([]byte(tc.cmdline)); got != tc.want {
			t.Errorf("oneShot(%q) = %v, want %v", tc.cmdline, got, tc.want)
		}
	}
}

func TestHeapRange(t *testing.T) {
	const maps = `00400000-00cfa000 r-xp 00000000 fe:00 9978438                            /usr/bin/driftd
0164d000-016e4000 rw-p 0124d000 fe:00 9978438                            /usr/bin/driftd
016e4000-03729000 rw-p 00000000 00:00 0
305280000000-305280800000 ---p 00000000 00:00 0
305280800000-305281000000 rw-p 00000000 00:00 0
305281000000-305284000000 ---p 00000000 00:00 0
7ffd2b1c6000-7ffd2b1e7000 rw-p 00000000 00:00 0                          [stack]
`
	for _, tc := range []struct {
		name   string
		addr   uintptr
		lo, hi uintptr
		ok     bool
	}{
		{"heap, Limit of it", 0x305280823456, 0x305280823000, 0x305280823000 + Limit, true},
		{"heap, cut at its end", 0x305280ffe010, 0x305280ffe000, 0x305281000000, true},
		{"reserved, not mapped", 0x305281000010, 0, 0, false},
		{"a file's mapping", 0x0164d010, 0, 0, false},
		{"the stack has a name", 0x7ffd2b1c6010, 0, 0, false},
		{"nowhere", 0x10, 0, 0, false},
	} {
		lo, hi, ok := heapRange([]byte(maps), tc.addr, 4096)
		if lo != tc.lo || hi != tc.hi || ok != tc.ok {
			t.Errorf("%s: heapRange(%#x) = %#x, %#x, %v; want %#x, %#x, %v", tc.name, tc.addr, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
	if _, _, ok := heapRange([]byte("zz-30 rw-p 0 00:00 0\n1-\n"), 0x10, 4096); ok {
		t.Error("heapRange accepted a malformed line")
	}
	// Where the kernel lets the runtime name its mappings, the heap is
	// several, named: the range runs on through the ones that follow it.
	const named = `305280000000-305280800000 ---p 00000000 00:00 0                          [anon: Go: heap reservation]
305280800000-305280900000 rw-p 00000000 00:00 0                          [anon: Go: heap]
305280900000-305280a00000 rw-p 00000000 00:00 0                          [anon: Go: unused]
305280a00000-305281000000 rw-p 00000000 00:00 0                          [anon: Go: heap]
305281000000-305284000000 ---p 00000000 00:00 0                          [anon: Go: heap reservation]
`
	if lo, hi, ok := heapRange([]byte(named), 0x3052808ff010, 4096); !ok || lo != 0x3052808ff000 || hi != 0x3052808ff000+Limit {
		t.Errorf("named heap: heapRange = %#x, %#x, %v", lo, hi, ok)
	}
	if lo, hi, ok := heapRange([]byte(named), 0x305280fff010, 4096); !ok || lo != 0x305280fff000 || hi != 0x305281000000 {
		t.Errorf("named heap, at its end: heapRange = %#x, %#x, %v", lo, hi, ok)
	}
	const apart = `305280800000-305280900000 rw-p 00000000 00:00 0
305280901000-305280a00000 rw-p 00000000 00:00 0
`
	if _, hi, _ := heapRange([]byte(apart), 0x3052808ff010, 4096); hi != 0x305280900000 {
		t.Errorf("a gap ends the range: hi = %#x", hi)
	}
}

func TestParseHex(t *testing.T) {
	for in, want := range map[string]uintptr{"0": 0, "ff": 255, "7ffd2b1c6000": 0x7ffd2b1c6000} {
		if got, ok := parseHex([]byte(in)); !ok || got != want {
			t.Errorf("parseHex(%q) = %#x, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "FF", "x1", "12345678901234567"} {
		if _, ok := parseHex([]byte(in)); ok {
			t.Errorf("parseHex(%q) accepted it", in)
		}
	}
}

func TestExeRanges(t *testing.T) {
	const maps = `00400000-00cfa000 r-xp 00000000 fe:00 9978438                            /usr/bin/driftd
00cfa000-0164d000 r--p 008fa000 fe:00 9978438                            /usr/bin/driftd
0164d000-016e4000 rw-p 0124d000 fe:00 9978438                            /usr/bin/driftd
016e4000-03729000 rw-p 00000000 00:00 0
7f6f2d386000-7f6f2d388000 r-xp 00000000 00:00 0                          [vdso]
7f6f2d400000-7f6f2d500000 r--p 00000000 fe:00 1234                       /usr/bin/driftd-old
`
	got := exeRanges([]byte(maps), []byte("/usr/bin/driftd"))
	want := [][2]uintptr{{0x400000, 0xcfa000}, {0xcfa000, 0x164d000}} // not the writable data, nor another file
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("exeRanges = %#x, want %#x", got, want)
	}
	if got := exeRanges([]byte(maps), []byte("/elsewhere")); len(got) != 0 {
		t.Errorf("exeRanges of another path = %#x", got)
	}
}

func TestMostlyCached(t *testing.T) {
	for _, tc := range []struct {
		vec  []byte
		want bool
	}{
		{[]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, true},
		{[]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 0}, true},
		{[]byte{1, 1, 1, 1, 1, 1, 1, 1, 0, 0}, false},
		{[]byte{3, 5, 1, 1, 1, 1, 1, 1, 1, 1}, true}, // only the low bit says resident
		{[]byte{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, false},
		{nil, false},
	} {
		if got := mostlyCached(tc.vec); got != tc.want {
			t.Errorf("mostlyCached(%v) = %v, want %v", tc.vec, got, tc.want)
		}
	}
}

func TestEfence(t *testing.T) {
	for v, want := range map[string]bool{
		"":                        false,
		"efence=1":                true,
		"gctrace=1,efence=1":      true,
		"efence=1,efence=0":       false,
		"efence=0":                false,
		"inittrace=1,notefence=1": false,
		"madvdontneed=1,efence=2": true,
	} {
		if got := efence(v); got != want {
			t.Errorf("efence(%q) = %v, want %v", v, got, want)
		}
	}
}
