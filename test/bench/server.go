package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// benchServer is a running test/bench/benchserver: its own process, so
// its CPU is read from /proc apart from the client's.
type benchServer struct {
	*proc
	url   string         // http://127.0.0.1:PORT, the first listener
	urls  []string       // every listener
	stdin io.WriteCloser // held open: the server exits at EOF
}

// target is the MCP endpoint of target i (tool set i mod the sets), the
// targets spread over the listeners.
func (s *benchServer) target(i int) string {
	return fmt.Sprintf("%s/t/%d/mcp", s.urls[i%len(s.urls)], i)
}

// cpu is the server's CPU time so far.
func (s *benchServer) cpu() (time.Duration, error) { return procCPU(s.pid()) }

// startServer builds the bench server once per harness and starts it with
// the given tool sets (e.g. "50" or "20,25,30,40,50") on ports listeners.
func (h *harness) startServer(ctx context.Context, sets string, legacy bool, ports int) (*benchServer, error) {
	return h.startFleetServer(ctx, sets, legacy, ports, "")
}

// startFleetServer is startServer serving, when fleetDir is not empty,
// benchgen's fleet target i at /t/i/mcp from its manifest fleetDir/i.json.
func (h *harness) startFleetServer(ctx context.Context, sets string, legacy bool, ports int, fleetDir string) (*benchServer, error) {
	if h.server == "" {
		bin := filepath.Join(h.tmp, "benchserver")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./test/bench/benchserver")
		build.Dir = h.root
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building the bench server: %v\n%s", err, out)
		}
		h.server = bin
	}
	args := []string{"-sets", sets, "-ports", fmt.Sprint(ports)}
	if legacy {
		args = append(args, "-legacy")
	}
	if fleetDir != "" {
		args = append(args, "-fleet", fleetDir)
	}
	cmd := exec.Command(h.server, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = nil
	name := "benchserver"
	if legacy {
		name += "-legacy"
	}
	p, err := h.start(name, cmd)
	if err != nil {
		return nil, err
	}
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case line := <-first:
		urls := strings.Fields(line)
		if len(urls) != ports || !strings.HasPrefix(urls[0], "http://127.0.0.1:") {
			return nil, fmt.Errorf("bench server did not start (first line %q)%s", line, p.tail())
		}
		return &benchServer{proc: p, url: urls[0], urls: urls, stdin: stdin}, nil
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("bench server printed no address in 10s%s", p.tail())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// writeFile writes a file in the harness's temp dir and returns its path.
func (h *harness) writeFile(name string, b []byte) (string, error) {
	path := filepath.Join(h.tmp, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b, 0o644)
}
