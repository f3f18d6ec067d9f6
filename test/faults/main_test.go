// Package faults_test runs hostile MCP servers against the built driftd
// binary, `driftd check` and `driftd run`, and holds it to the reliability
// bar of DESIGN §16: every run ends as a classified failure or finding
// within its deadline plus one second, with bounded memory and output, no
// goroutine or fd growth in the daemon, and the credential never printed.
// docs/testing.md ("Fault suite") describes the bounds.
package faults_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// marker is the bearer credential of every probe; it must appear in no
// output, even when a server echoes it back.
const marker = "MARKER-faults-5ecr3t-7f3a"

// The bounds the suite holds driftd to.
const (
	probeTimeout   = 2 * time.Second
	wallSlack      = 1500 * time.Millisecond // deadline + 1 s, plus process start
	maxRSSKiB      = 256 << 10               // peak RSS of one `driftd check`
	maxReportBytes = 1 << 20                 // check --json, /api/v1/targets/{name}
	maxPageBytes   = 2 << 20                 // any daemon endpoint or status page
	maxLogLine     = 16 << 10                // one line of the daemon's log
	maxStateFile   = 1 << 20                 // one file under state_dir
	hardKill       = 30 * time.Second        // a child still running then is killed
)

var (
	binPath  string // the built driftd
	buildErr error
)

func TestMain(m *testing.M) {
	if out := os.Getenv(wrapEnv); out != "" {
		os.Exit(wrap(out, os.Args[1:]))
	}
	flag.Parse()
	dir, err := os.MkdirTemp("", "driftd-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "driftd")
	if !testing.Short() {
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/driftd/driftd/cmd/driftd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/driftd: %v\n%s", err, out)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// wrapEnv makes the test binary a small wrapper that runs its arguments
// and writes the child's peak RSS (KiB) to the file it names. Linux
// carries a process's RSS high-water mark across fork and exec, so a
// child started straight from this test process would report the test's
// own RSS (a hundred MiB of hostile payloads) as its peak; started from
// the freshly exec'd wrapper it inherits only the wrapper's ~10 MiB.
const wrapEnv = "DRIFTD_FAULTS_RUSAGE_FILE"

func wrap(out string, args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	_ = cmd.Run()
	if cmd.ProcessState == nil {
		return 125
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		_ = os.WriteFile(out, fmt.Appendf(nil, "%d", ru.Maxrss), 0o600)
	}
	return cmd.ProcessState.ExitCode()
}

// needBinary skips in -short mode and fails when the build failed.
func needBinary(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the built binary against hostile servers")
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// cappedBuffer keeps the first limit bytes written and counts them all, so
// a child that prints without end cannot exhaust the test's memory.
type cappedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	total int64
}

func newCapped(limit int) *cappedBuffer { return &cappedBuffer{limit: limit} }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func (c *cappedBuffer) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// result is one finished child process.
type result struct {
	code           int
	wall           time.Duration
	maxRSSKiB      int64
	stdout, stderr *cappedBuffer
}

// runDriftd runs the binary to completion (killed after hardKill).
func runDriftd(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hardKill)
	defer cancel()
	rusage := filepath.Join(t.TempDir(), "maxrss")
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{binPath}, args...)...)
	cmd.Env = append(os.Environ(), wrapEnv+"="+rusage)
	res := result{stdout: newCapped(8 << 20), stderr: newCapped(8 << 20)}
	cmd.Stdout, cmd.Stderr = res.stdout, res.stderr
	start := time.Now()
	err := cmd.Run()
	res.wall = time.Since(start)
	if cmd.ProcessState == nil {
		t.Fatalf("driftd did not run: %v", err)
	}
	res.code = cmd.ProcessState.ExitCode()
	if b, err := os.ReadFile(rusage); err == nil {
		res.maxRSSKiB, _ = strconv.ParseInt(string(b), 10, 64) // KiB on Linux
	} else {
		t.Errorf("no peak RSS recorded: %v", err)
	}
	if ctx.Err() != nil {
		t.Errorf("driftd %v still running after %v: killed", args[0], hardKill)
	}
	return res
}

// writeFile writes b to a new file in dir and returns its path.
func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
