package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestCgroupMemoryLimit reads the limits of cgroup v2 (a namespace root
// and a nested cgroup), hybrid v2, and v1, and finds none where there is
// none.
func TestCgroupMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
		from  string
	}{
		{"v2 namespace root", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "268435456\n",
		}, 268435456, "sys/fs/cgroup/memory.max"},
		{"v2 nested", map[string]string{
			"proc/self/cgroup":                          "0::/kubepods/pod1/c1\n",
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": "536870912\n",
			"sys/fs/cgroup/memory.max":                  "max\n",
		}, 536870912, "sys/fs/cgroup/kubepods/pod1/c1/memory.max"},
		{"v2 unlimited", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, 0, ""},
		{"hybrid", map[string]string{
			"proc/self/cgroup":                 "4:memory:/\n0::/\n",
			"sys/fs/cgroup/unified/memory.max": "1073741824\n",
		}, 1073741824, "sys/fs/cgroup/unified/memory.max"},
		{"v1", map[string]string{
			"proc/self/cgroup": "5:cpu,cpuacct:/\n4:memory:/docker/abc\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "134217728\n",
		}, 134217728, "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{
			"proc/self/cgroup":                           "4:memory:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range c.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, from, err := cgroupMemoryLimit(root)
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if c.from != "" {
				want = filepath.Join(root, c.from)
			}
			if got != c.want || from != want {
				t.Errorf("got %d from %q, want %d from %q", got, from, c.want, want)
			}
		})
	}
	if _, _, err := cgroupMemoryLimit(t.TempDir()); err == nil {
		t.Error("no /proc/self/cgroup: want an error")
	}
}

// TestAutoMemLimitRatio: a ratio outside (0, 1] is a usage error, before
// anything starts.
func TestAutoMemLimitRatio(t *testing.T) {
	for _, r := range []string{"0", "1.5", "-1"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"run", "--config.file", "unused.yml", "--web.listen-address=127.0.0.1:0", "--auto-gomemlimit.ratio=" + r}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--auto-gomemlimit.ratio") {
			t.Errorf("ratio %s: exit %d, stderr %q; want 2 naming the flag", r, code, stderr.String())
		}
	}
}

// TestLimitOneShotMemory: check and capture set their soft memory limit,
// unless GOMEMLIMIT is set, which the runtime has then applied itself.
func TestLimitOneShotMemory(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	t.Setenv("GOMEMLIMIT", "")
	limitOneShotMemory()
	if got := debug.SetMemoryLimit(-1); got != oneShotMemoryLimit {
		t.Fatalf("limit %d, want %d", got, oneShotMemoryLimit)
	}
	debug.SetMemoryLimit(before)
	t.Setenv("GOMEMLIMIT", "1GiB")
	limitOneShotMemory()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("with GOMEMLIMIT set, the limit became %d, want %d (unchanged)", got, before)
	}
}
