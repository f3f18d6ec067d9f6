package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/test/bench/toolset"
)

const (
	floorTools  = 50
	floorRounds = 5
	floorRuns   = 80 // per side per round
)

// floor measures the probe engine's client CPU per run against a plain
// net/http + encoding/json client that sends the very requests the probe
// sends (budget ≤ 1.25). The server is another process, so RUSAGE_SELF is
// the client alone.
func (h *harness) floor(ctx context.Context) error {
	declared, err := manifest.Parse(toolset.Manifest(0, floorTools), ".json")
	if err != nil {
		return err
	}
	plan, err := recordPlan(ctx, declared)
	if err != nil {
		return err
	}
	srv, err := h.startServer(ctx, fmt.Sprint(floorTools), false, 1)
	if err != nil {
		return err
	}
	defer h.stopProc(srv.proc)
	url := srv.target(0)
	target := config.NewTarget("bench", url)
	engine := func() error {
		if rep := probe.Run(ctx, probe.Prepare(target, declared), probe.Options{Version: "bench"}); !rep.Success {
			return fmt.Errorf("probe failed: %s: %s", rep.FailureReason, rep.FailureMessage)
		}
		return nil
	}
	floor := func() error { return floorRun(ctx, url, plan) }
	sides := []func() error{engine, floor}
	for _, f := range sides { // warm up connections' code paths and caches
		for range 10 {
			if err := f(); err != nil {
				return err
			}
		}
	}
	var client, server [2][]time.Duration
	var ratios []float64
	for round := range floorRounds {
		var c [2]time.Duration
		for k := range 2 {
			side := (k + round) % 2 // alternate which side goes first
			cpu, srvCPU, err := measureCPU(srv, sides[side])
			if err != nil {
				return err
			}
			c[side] = cpu
			client[side] = append(client[side], cpu)
			server[side] = append(server[side], srvCPU)
		}
		ratios = append(ratios, float64(c[0])/float64(c[1]))
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	ratio := median(ratios)
	fmt.Fprintf(h.out, "\nprobe engine vs floor: %d distinct ~%d-node tools, modern bench server in its own process, %d interleaved rounds × %d runs a side\n",
		floorTools, benchgen.Nodes(toolInput(declared)), floorRounds, floorRuns)
	benchgen.Budget(h.out, "probe engine client CPU per run / floor's", "≤ 1.25", fmt.Sprintf("%.2f", ratio), ratio <= 1.25)
	h.printf("each run, both sides, checked identical in the mock's log: %s", describePlan(plan))
	h.printf("client CPU per run (median): engine %v, floor %v; per-round ratios %s",
		dur(median(client[0])), dur(median(client[1])), floats(ratios))
	h.printf("server CPU per run (information, other process): engine %v, floor %v",
		dur(median(server[0])), dur(median(server[1])))
	return srv.alive()
}

// measureCPU runs f floorRuns times and returns the client's and the
// server's CPU per run. A GC first, so one side's garbage is not charged
// to the other.
func measureCPU(srv *benchServer, f func() error) (client, server time.Duration, err error) {
	runtime.GC()
	s0, err := srv.cpu()
	if err != nil {
		return 0, 0, err
	}
	c0 := selfCPU()
	for range floorRuns {
		if err := f(); err != nil {
			return 0, 0, err
		}
	}
	c1 := selfCPU()
	s1, err := srv.cpu()
	if err != nil {
		return 0, 0, err
	}
	return (c1 - c0) / floorRuns, (s1 - s0) / floorRuns, nil
}

// step is one HTTP request of a probe run, as the mock logged it.
type step struct {
	conn   int // the run's connection, numbered from 1
	rpc    string
	header http.Header
	body   []byte
	close  bool // sent with Connection: close (the fresh connection)
	status int
}

// recordPlan probes a logging in-process mock once and turns the log
// into the floor's plan; then it replays the plan against a reset mock
// and checks the two logs are the same requests, byte for byte, on the
// same connections, with the same answers.
func recordPlan(ctx context.Context, declared *manifest.Manifest) ([]step, error) {
	srv := mcptest.NewServer(mcptest.Options{Tools: toolset.Tools(0, floorTools)})
	defer srv.Close()
	rep := probe.Run(ctx, probe.Prepare(config.NewTarget("bench", srv.URL), declared), probe.Options{Version: "bench"})
	if !rep.Success {
		return nil, fmt.Errorf("recording probe failed: %s", rep.FailureMessage)
	}
	if err := srv.CheckNoViolations(); err != nil {
		return nil, err
	}
	probeLog := srv.Requests()
	var plan []step
	for _, r := range probeLog {
		if r.HTTPMethod != http.MethodPost || r.Path != mcptest.EndpointPath {
			return nil, fmt.Errorf("the probe sent %s %s, which the floor cannot replay", r.HTTPMethod, r.Path)
		}
		hd := r.Header.Clone()
		closing := strings.EqualFold(hd.Get("Connection"), "close")
		hd.Del("Connection")
		hd.Del("Content-Length")
		plan = append(plan, step{conn: r.Conn, rpc: r.Method, header: hd, body: r.Body, close: closing, status: r.Status})
	}
	srv.Reset()
	if err := floorRun(ctx, srv.URL, plan); err != nil {
		return nil, err
	}
	floorLog := srv.Requests()
	if len(floorLog) != len(probeLog) {
		return nil, fmt.Errorf("floor sent %d requests, the probe %d", len(floorLog), len(probeLog))
	}
	for i, p := range probeLog {
		f := floorLog[i]
		if f.Conn != p.Conn || f.Method != p.Method || f.Status != p.Status || !bytes.Equal(f.Body, p.Body) || !sameHeader(f.Header, p.Header) {
			return nil, fmt.Errorf("floor request %d differs from the probe's: conn %d/%d, %q/%q, status %d/%d, headers %v / %v",
				i+1, f.Conn, p.Conn, f.Method, p.Method, f.Status, p.Status, f.Header, p.Header)
		}
	}
	return plan, nil
}

func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\n") != strings.Join(b[k], "\n") {
			return false
		}
	}
	return true
}

// floorRun is the floor: the plan's requests sent with plain net/http, a
// new connection wherever the probe opened one (as the probe does, every
// run), each response decoded fully with encoding/json; one deadline for
// the run, as the probe has.
func floorRun(ctx context.Context, url string, plan []step) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	clients := map[int]*http.Client{}
	defer func() {
		for _, c := range clients {
			c.CloseIdleConnections()
		}
	}()
	for _, s := range plan {
		c := clients[s.conn]
		if c == nil {
			c = &http.Client{Transport: &http.Transport{DisableKeepAlives: s.close, DisableCompression: true}}
			clients[s.conn] = c
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(s.body))
		if err != nil {
			return err
		}
		req.Header = s.header.Clone()
		req.Close = s.close
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != s.status {
			return fmt.Errorf("floor %s: HTTP %d, want %d", s.rpc, resp.StatusCode, s.status)
		}
		if len(b) > 0 {
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				return fmt.Errorf("floor %s: %w", s.rpc, err)
			}
		}
	}
	return nil
}

// describePlan is "POST server/discover (conn 1), …".
func describePlan(plan []step) string {
	parts := make([]string, len(plan))
	conns := map[int]bool{}
	for i, s := range plan {
		conns[s.conn] = true
		parts[i] = fmt.Sprintf("%s (conn %d", s.rpc, s.conn)
		if s.close {
			parts[i] += ", Connection: close"
		}
		parts[i] += ")"
	}
	return fmt.Sprintf("%s — %d requests on %d new connections", strings.Join(parts, ", "), len(plan), len(conns))
}

// toolInput is the first declared tool's input schema, for the node count.
func toolInput(m *manifest.Manifest) json.RawMessage {
	if len(m.Tools) == 0 {
		return nil
	}
	return m.Tools[0].InputSchema
}

func dur(ns float64) time.Duration {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

func floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(parts, " ")
}
