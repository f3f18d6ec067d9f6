package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// daemon is a running `driftd run`.
type daemon struct {
	*proc
	url        string // http://127.0.0.1:PORT
	configPath string
	dir        string
	runs       *runLog
}

// fleet is a daemon configuration: n targets on the bench server, target
// i declared by manifests[i mod len(manifests)], which is what the server
// serves at /t/i/mcp when its sets match the manifests.
type fleet struct {
	n         int
	schedule  string
	manifests []string
}

// config renders the fleet as driftd's YAML configuration.
func (f fleet) config(srv *benchServer, stateDir string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  schedule: %q\n  timeout: 30s\n  state_dir: %q\ntargets:\n", f.schedule, stateDir)
	for i := range f.n {
		fmt.Fprintf(&b, "  - name: t%05d\n    url: %q\n    manifest: %q\n", i, srv.target(i), f.manifests[i%len(f.manifests)])
	}
	return []byte(b.String())
}

// startDaemon writes the fleet's configuration under name and starts
// `driftd run` on a loopback port it chooses, reading the address back
// from driftd's JSON log, then waits until /-/ready. DRIFTD_BENCH_ARGS,
// if set, are more flags for every daemon the bench starts (split on
// spaces), to measure one setting against the defaults.
func (h *harness) startDaemon(ctx context.Context, name string, srv *benchServer, f fleet, extra ...string) (*daemon, error) {
	dir := filepath.Join(h.tmp, name)
	cfg, err := h.writeFile(filepath.Join(name, "driftd.yml"), f.config(srv, filepath.Join(dir, "state")))
	if err != nil {
		return nil, err
	}
	args := append([]string{"run", "--config", cfg, "--web.listen-address=127.0.0.1:0",
		"--web.enable-lifecycle", "--log.format=json"}, extra...)
	args = append(args, strings.Fields(os.Getenv("DRIFTD_BENCH_ARGS"))...)
	cmd := exec.Command(h.driftd, args...)
	p, err := h.start(name, cmd)
	if err != nil {
		return nil, err
	}
	d := &daemon{proc: p, configPath: cfg, dir: dir, runs: newRunLog(p.log)}
	// A fleet's configuration takes a while to read before driftd
	// listens: 60 s and 5 ms more a target.
	wait := 60*time.Second + time.Duration(f.n)*5*time.Millisecond
	deadline := time.Now().Add(wait)
	for d.url == "" {
		if err := p.alive(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s logged no listen address in %v%s", name, wait, p.tail())
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
		d.url = listenAddress(p.log)
	}
	for {
		resp, err := control.Get(d.url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
		if err := p.alive(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s not ready in %v%s", name, wait, p.tail())
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// listenAddress finds driftd's "listening" log line.
func listenAddress(logPath string) string {
	f, err := os.Open(logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec struct{ Msg, Address string }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" && strings.HasPrefix(rec.Address, "127.0.0.1:") {
			return "http://" + rec.Address
		}
	}
	return ""
}

// metrics scrapes the daemon.
func (d *daemon) metrics(ctx context.Context) (*scrape, error) {
	return d.metricsInto(ctx, new(bytes.Buffer))
}

// metricsInto is metrics reading the body into buf (getMetrics).
func (d *daemon) metricsInto(ctx context.Context, buf *bytes.Buffer) (*scrape, error) {
	s, err := getMetrics(ctx, d.url+"/metrics", buf)
	if err != nil {
		if aerr := d.alive(); aerr != nil {
			return nil, aerr
		}
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	return s, nil
}

// reload rewrites the configuration and reloads it through POST /-/reload,
// which answers with the outcome.
func (d *daemon) reload(srv *benchServer, f fleet) error {
	if err := os.WriteFile(d.configPath, f.config(srv, filepath.Join(d.dir, "state")), 0o644); err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, d.url+"/-/reload", nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Driftd-Request", "1") // docs/security.md
	start := time.Now()
	resp, err := reloadControl.Do(req)
	if err != nil {
		// The daemon's write timeout (2 minutes) ends the request of a
		// reload that reads a fleet's manifests for longer; the reload
		// goes on, and its metrics say when it is done.
		return d.awaitReload(start, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: reload answered HTTP %d%s", d.name, resp.StatusCode, d.tail())
	}
	return nil
}

// awaitReload waits, for at most reloadControl's timeout, until the
// daemon reports a successful reload that began after start, reading
// driftd_config_last_reload_success_timestamp_seconds; a failed reload
// (driftd_config_last_reload_successful 0) or a dead daemon ends it.
// cause is the request's error, returned if the wait gives up.
func (d *daemon) awaitReload(start time.Time, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), reloadControl.Timeout)
	defer cancel()
	for {
		if err := d.alive(); err != nil {
			return err
		}
		if s, err := d.metrics(ctx); err == nil {
			ok := s.sum("driftd_config_last_reload_successful", nil)
			at := s.sum("driftd_config_last_reload_success_timestamp_seconds", nil)
			switch {
			case ok == 1 && at >= float64(start.Unix()):
				return nil
			case ok == 0:
				return fmt.Errorf("%s: reload failed (after %v)%s", d.name, cause, d.tail())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: reload: %w; no successful reload reported since", d.name, cause)
		case <-time.After(15 * time.Second):
		}
	}
}
