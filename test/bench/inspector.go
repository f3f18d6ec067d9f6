package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/test/bench/toolset"
)

const (
	inspectorPkg     = "@modelcontextprotocol/inspector-cli"
	inspectorVersion = "1.0.3"
	inspectorTools   = 50
	inspectorRounds  = 15
)

// inspector measures `driftd check` against the MCP Inspector CLI's
// tools/list, whole processes, wall time, on one legacy server (budget:
// driftd ≥ 30× faster). Both must list every tool on every run.
func (h *harness) inspector(ctx context.Context) error {
	cli, cwd, err := h.installInspector(ctx)
	if err != nil {
		return err
	}
	srv, err := h.startServer(ctx, fmt.Sprint(inspectorTools), true, 1)
	if err != nil {
		return err
	}
	defer h.stopProc(srv.proc)
	url := srv.url + "/mcp"
	mf, err := h.writeFile("inspector/manifest.json", toolset.Manifest(0, inspectorTools))
	if err != nil {
		return err
	}
	sides := []struct {
		name  string
		dir   string
		argv  []string
		check func([]byte) error
	}{
		{"driftd check", h.root, []string{h.driftd, "check", mf, "--base-url", url}, func(out []byte) error {
			if want := fmt.Sprintf("%d served", inspectorTools); !bytes.Contains(out, []byte(want)) {
				return fmt.Errorf("driftd check did not report %q:\n%s", want, out)
			}
			return nil
		}},
		{"inspector tools/list", cwd, []string{"node", cli, "--cli", url, "--transport", "http", "--method", "tools/list"}, func(out []byte) error {
			var res struct{ Tools []json.RawMessage }
			if err := json.Unmarshal(out, &res); err != nil || len(res.Tools) != inspectorTools {
				return fmt.Errorf("inspector listed %d tools (%v):\n%.500s", len(res.Tools), err, out)
			}
			return nil
		}},
	}
	var wall, cpu, server [2][]time.Duration
	for round := -1; round < inspectorRounds; round++ { // round -1 warms the file cache
		for k := range 2 {
			side := (k + max(round, 0)) % 2
			s := sides[side]
			s0, err := srv.cpu()
			if err != nil {
				return err
			}
			t, err := h.runTimed(ctx, s.name, s.dir, s.argv...)
			if err != nil {
				return err
			}
			if err := s.check(t.out); err != nil {
				return err
			}
			s1, err := srv.cpu()
			if err != nil {
				return err
			}
			if round >= 0 {
				wall[side] = append(wall[side], t.wall)
				cpu[side] = append(cpu[side], t.cpu)
				server[side] = append(server[side], s1-s0)
			}
		}
	}
	ratio := median(wall[1]) / median(wall[0])
	fmt.Fprintf(h.out, "\ndriftd check vs MCP Inspector CLI %s tools/list: whole process wall time, %d distinct tools, legacy bench server in its own process, %d interleaved runs each\n",
		inspectorVersion, inspectorTools, inspectorRounds)
	benchgen.Budget(h.out, "Inspector wall time / driftd check's", "≥ 20", fmt.Sprintf("%.2f", ratio), ratio >= 20)
	h.printf("wall time (median): driftd check %v, inspector %v", dur(median(wall[0])), dur(median(wall[1])))
	h.printf("process CPU, children included (information; wall time is the budget): driftd check %v, inspector %v; ratio %.1f",
		dur(median(cpu[0])), dur(median(cpu[1])), median(cpu[1])/median(cpu[0]))
	h.printf("server CPU per run, mean over the runs (information; /proc counts in 10 ms ticks): driftd check %v, inspector %v",
		dur(mean(server[0])), dur(mean(server[1])))
	return srv.alive()
}

// installInspector installs the pinned Inspector CLI with npm into
// .cache/bench-inspector once, and returns its entry point and the
// directory to run it from. The CLI reads "../package.json" relative to
// its working directory (to name itself) before importing it relative to
// its own file, so it must run from a directory whose parent has a
// package.json: .cache/bench-inspector/run.
func (h *harness) installInspector(ctx context.Context) (cli, cwd string, err error) {
	dir := filepath.Join(h.root, ".cache", "bench-inspector")
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(inspectorPkg))
	cli = filepath.Join(pkgDir, "build", "cli.js")
	cwd = filepath.Join(dir, "run")
	if _, err := exec.LookPath("node"); err != nil {
		return "", "", errors.New("node is not installed (apt-get install nodejs npm)")
	}
	if installedVersion(pkgDir) != inspectorVersion {
		if _, err := exec.LookPath("npm"); err != nil {
			return "", "", errors.New("npm is not installed (apt-get install npm)")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
		pj := filepath.Join(dir, "package.json")
		if _, err := os.Stat(pj); err != nil {
			if err := os.WriteFile(pj, []byte(`{"name":"driftd-bench-inspector","private":true}`+"\n"), 0o644); err != nil {
				return "", "", err
			}
		}
		fmt.Fprintf(h.out, "installing %s@%s with npm into %s\n", inspectorPkg, inspectorVersion, dir)
		ictx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		if t, err := h.runTimed(ictx, "npm install", dir, "npm", "install", "--no-audit", "--no-fund", "--save-exact",
			inspectorPkg+"@"+inspectorVersion); err != nil {
			return "", "", fmt.Errorf("npm install %s@%s failed (is the npm registry reachable?): %w\n%s", inspectorPkg, inspectorVersion, err, t.out)
		}
		if v := installedVersion(pkgDir); v != inspectorVersion {
			return "", "", fmt.Errorf("npm installed %s version %q, want %s", inspectorPkg, v, inspectorVersion)
		}
	}
	return cli, cwd, os.MkdirAll(cwd, 0o755)
}

func installedVersion(pkgDir string) string {
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return ""
	}
	var pj struct{ Version string }
	_ = json.Unmarshal(b, &pj)
	return pj.Version
}

// timed is one finished child: wall time from start to reaped, CPU
// (user + system, its waited-for descendants included) and stdout.
type timed struct {
	wall, cpu time.Duration
	out       []byte
}

// runTimed runs a short-lived child to completion, bounded by 2 minutes
// and ctx; a non-zero exit is an error carrying stderr.
func (h *harness) runTimed(ctx context.Context, name, dir string, argv ...string) (timed, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	p, err := h.start(name, cmd)
	if err != nil {
		return timed{}, err
	}
	defer h.stopProc(p) // ends any child it left behind
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		return timed{}, fmt.Errorf("%s did not finish in 2 minutes", name)
	case <-ctx.Done():
		return timed{}, ctx.Err()
	}
	t := timed{wall: time.Since(start), out: stdout.Bytes()}
	if p.err != nil {
		return t, fmt.Errorf("%s: %v\n%s", name, p.err, strings.TrimSpace(stderr.String()))
	}
	t.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return t, nil
}
