// Command bench is driftd's benchmark harness: the budgets of DESIGN §14,
// each printed as a benchgen.Budget line measured side by side in one run
// (docs/benchmarks.md). Run it from the module root:
//
//	go run ./test/bench [-driftd bin/driftd] bench [inspector] [blackbox]
//	go run ./test/bench [-driftd bin/driftd] scale
//	go run ./test/bench [-driftd bin/driftd] fleet
//
// Nothing here fails on timing. The exit code is 1 only for a harness
// failure: a server that did not start, a probe that failed, a tool that is
// not installed. Every child process is stopped on every exit path.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/driftd/driftd/test/bench/rlimit"
)

// harness is one invocation: its temp dir, its children, its output.
type harness struct {
	out    io.Writer
	root   string // the module root (the working directory)
	driftd string // absolute path of the built binary
	tmp    string
	procs  []*proc
	server string // the built benchserver
}

// control is the client of the harness's own requests to the daemons and
// the exporter: bounded, so a hung process cannot hang the harness.
var control = &http.Client{Timeout: 2 * time.Minute}

// reloadControl is control for POST /-/reload, which answers once every
// new manifest of the fleet is read and checked: a 100,000-target fleet's
// reload parses 100,000 files (minutes on 2 cores; the harness prints
// how long it took).
var reloadControl = &http.Client{Timeout: 30 * time.Minute}

// steps are the benchmarks of `bench`, in the order they run.
var steps = map[string]func(*harness, context.Context) error{
	"inspector": (*harness).inspector,
	"blackbox":  (*harness).blackbox,
}

var stepOrder = []string{"inspector", "blackbox"}

func main() {
	driftd := flag.String("driftd", "bin/driftd", "the driftd binary to measure (make build)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./test/bench [-driftd PATH] bench [%s ...] | scale | fleet\n", stepOrder[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	rlimit.RaiseNoFile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *driftd, flag.Arg(0), flag.Args()[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: HARNESS FAILURE: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, driftd, cmd string, args []string) (err error) {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return errors.New("run from the module root (make bench)")
	}
	if !filepath.IsAbs(driftd) {
		driftd = filepath.Join(root, driftd)
	}
	if _, err := os.Stat(driftd); err != nil {
		return fmt.Errorf("driftd binary: %w (make build)", err)
	}
	tmp, err := os.MkdirTemp("", "driftd-bench-")
	if err != nil {
		return err
	}
	h := &harness{out: os.Stdout, root: root, driftd: driftd, tmp: tmp}
	defer h.cleanup()
	h.header(ctx)
	switch cmd {
	case "bench":
		ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
		defer cancel()
		if len(args) == 0 {
			args = stepOrder
		}
		for _, a := range args {
			if steps[a] == nil {
				return fmt.Errorf("unknown step %q (want %v)", a, stepOrder)
			}
		}
		for _, name := range stepOrder {
			if slices.Contains(args, name) {
				if err := steps[name](h, ctx); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
		}
		return nil
	case "fleet":
		ctx, cancel := context.WithTimeout(ctx, 3*time.Hour)
		defer cancel()
		if err := h.fleetBench(ctx); err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		return nil
	case "scale":
		ctx, cancel := context.WithTimeout(ctx, 90*time.Minute)
		defer cancel()
		if err := h.scale(ctx); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q (want bench, scale or fleet)", cmd)
}

// header names what was measured and on what: the machine is shared, so
// its load at the start is part of the result.
func (h *harness) header(ctx context.Context) {
	v, err := exec.CommandContext(ctx, h.driftd, "version").Output()
	version := strings.TrimSpace(strings.SplitN(string(v), "\n", 2)[0])
	if err != nil {
		version = "version unknown: " + err.Error()
	}
	b, _ := os.ReadFile("/proc/loadavg")
	load := strings.Fields(string(b))
	if len(load) > 3 {
		load = load[:3]
	}
	bin := h.driftd
	if rel, err := filepath.Rel(h.root, bin); err == nil {
		bin = rel
	}
	fmt.Fprintf(h.out, "bench: %s (%s); %s, %d CPUs, load average %s at start\n", bin, version, runtime.Version(), runtime.NumCPU(),
		strings.Join(load, " "))
}

// cleanup stops every child, newest first, and removes the temp dir.
func (h *harness) cleanup() {
	for i := len(h.procs) - 1; i >= 0; i-- {
		h.procs[i].stop(10 * time.Second)
	}
	h.procs = nil
	_ = os.RemoveAll(h.tmp)
}

// stopProc stops a child before the harness ends (the next step should
// not share the machine with it).
func (h *harness) stopProc(p *proc) {
	p.stop(10 * time.Second)
	h.procs = slices.DeleteFunc(h.procs, func(q *proc) bool { return q == p })
}

// printf prints an information line under a benchmark's budget lines.
func (h *harness) printf(format string, args ...any) {
	fmt.Fprintf(h.out, "  "+format+"\n", args...)
}

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
