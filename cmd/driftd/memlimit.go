package main

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// noCgroupLimit: cgroup v1 reports "no limit" as a huge number (the
// largest page-aligned int64); anything this large is no limit.
const noCgroupLimit = 1 << 62

// cgroupMemoryLimit returns the memory limit of the cgroup this process
// runs in, and the file it was read from, for --auto-gomemlimit. root is
// the filesystem root ("/"; a directory in tests). It reads the cgroup v2
// memory.max of the process's cgroup (or of the namespace's root), else
// the v1 memory controller's memory.limit_in_bytes; 0 means no limit was
// found.
func cgroupMemoryLimit(root string) (int64, string, error) {
	f, err := os.Open(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	var candidates []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := filepath.Clean("/" + parts[2])
		switch {
		case parts[0] == "0" && parts[1] == "": // cgroup v2, at /sys/fs/cgroup or, hybrid, its unified/
			for _, mount := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
				candidates = append(candidates, filepath.Join(root, mount, path, "memory.max"), filepath.Join(root, mount, "memory.max"))
			}
		case hasController(parts[1], "memory"): // cgroup v1
			mount := filepath.Join(root, "sys/fs/cgroup/memory")
			candidates = append(candidates, filepath.Join(mount, path, "memory.limit_in_bytes"), filepath.Join(mount, "memory.limit_in_bytes"))
		}
	}
	if err := sc.Err(); err != nil {
		return 0, "", err
	}
	for _, c := range candidates {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, c, errors.New(c + ": not a number of bytes: " + strconv.Quote(s))
		}
		if n > 0 && n < noCgroupLimit {
			return n, c, nil
		}
	}
	return 0, "", nil
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// oneShotMemoryLimit is the Go runtime's soft memory limit in driftd
// check and capture when GOMEMLIMIT is not set. A one-shot run's heap is
// what the server sent, parsed, and with the collector's default headroom
// it peaked at twice that: about 250 MiB of RSS for a hostile listing of
// 100,000 tiny tools (test/faults), on a CI runner that may allow 256.
// Under the limit the collector runs sooner instead, and the same listing
// peaks at about 200 MiB. An ordinary check's heap, a few MiB, never
// reaches it. A listing whose parse needs more than the limit still gets
// it: the limit is soft.
const oneShotMemoryLimit = 192 << 20

// limitOneShotMemory sets oneShotMemoryLimit unless GOMEMLIMIT is set.
func limitOneShotMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(oneShotMemoryLimit)
	}
}
