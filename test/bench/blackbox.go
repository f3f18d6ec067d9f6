package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/test/bench/toolset"
)

const (
	blackboxBin     = "prometheus-blackbox-exporter" // Debian's package and binary
	blackboxProbes  = 1000                           // per round
	perProbeRounds  = 3
	perProbeTargets = 50
	perProbeEvery   = 2 * time.Second
	perProbeWindow  = 10 * time.Second
)

// perProbeSchedule is the daemon's schedule for the comparison, the
// interval blackbox_exporter is scraped at.
var perProbeSchedule = "@every " + perProbeEvery.String()

const blackboxConfig = `modules:
  http_2xx:
    prober: http
    timeout: 5s
`

// blackbox measures driftd's daemon CPU per MCP request against
// blackbox_exporter's CPU per HTTP probe, both read from /proc, in
// interleaved rounds of one run (budget: driftd ≤ 0.5× blackbox), under the
// same load shape: the daemon probes perProbeTargets targets every
// perProbeEvery, and blackbox_exporter is scraped for as many targets at
// the same interval, phases spread, as Prometheus drives it. The budget
// line is a 5-tool server (the size of most MCP servers, and of the one
// the issue measured); the same comparison at 50 distinct tools follows as
// information, since an MCP probe of 50 tools reads three ~150 KB responses where the HTTP probe
// reads a few bytes.
func (h *harness) blackbox(ctx context.Context) error {
	bin, err := exec.LookPath(blackboxBin)
	if err != nil {
		return fmt.Errorf("%s is not installed (apt-get install -y prometheus-blackbox-exporter; make bench does it as root)", blackboxBin)
	}
	if err := h.blackboxWith(ctx, bin, 5, true); err != nil {
		return err
	}
	return h.blackboxWith(ctx, bin, 50, false)
}

// blackboxWith is one comparison, its daemon's targets serving tools
// distinct tools; budget says whether its line is the budget's.
func (h *harness) blackboxWith(ctx context.Context, bin string, tools int, budget bool) error {
	srv, err := h.startServer(ctx, strconv.Itoa(tools), false, 1)
	if err != nil {
		return err
	}
	defer h.stopProc(srv.proc)
	bb, bbURL, err := h.startBlackbox(ctx, bin)
	if err != nil {
		return err
	}
	defer h.stopProc(bb)
	mf, err := h.writeFile(fmt.Sprintf("perprobe-%d/manifest.json", tools), toolset.Manifest(0, tools))
	if err != nil {
		return err
	}
	d, err := h.startDaemon(ctx, fmt.Sprintf("driftd-perprobe-%d", tools), srv, fleet{n: perProbeTargets, schedule: perProbeSchedule, manifests: []string{mf}})
	if err != nil {
		return err
	}
	defer h.stopProc(d.proc)
	if err := waitProbes(ctx, d, perProbeTargets, 30*time.Second); err != nil {
		return err
	}
	probeURL := bbURL + "/probe?module=http_2xx&target=" + url.QueryEscape(srv.url+"/ok")
	client := &http.Client{Timeout: 10 * time.Second}
	var bbCPU, bbSeq, dCPU, bbSrv, dSrv []time.Duration
	var dProbes, bbProbes int
	for range perProbeRounds {
		cpu, srvCPU, n, err := blackboxPaced(ctx, client, probeURL, bb.pid(), srv, perProbeWindow)
		if err != nil {
			return err
		}
		bbCPU, bbSrv, bbProbes = append(bbCPU, cpu), append(bbSrv, srvCPU), bbProbes+n
		if cpu, _, err = blackboxRound(ctx, client, probeURL, bb.pid(), srv); err != nil {
			return err
		}
		bbSeq = append(bbSeq, cpu)
		cpu, srvCPU, n, err = daemonWindow(ctx, d, srv, perProbeWindow)
		if err != nil {
			return err
		}
		dCPU, dSrv, dProbes = append(dCPU, cpu), append(dSrv, srvCPU), dProbes+n
	}
	for _, p := range []*proc{bb, d.proc, srv.proc} {
		if err := p.alive(); err != nil {
			return err
		}
	}
	// An MCP probe sends several requests where an HTTP probe sends one:
	// the budget compares CPU per request (DESIGN §14), counted by
	// driftd's own metrics; the per-probe ratio follows as information.
	m, err := d.metrics(ctx)
	if err != nil {
		return err
	}
	probes := m.sum("driftd_probes_total", nil)
	if probes == 0 {
		return errors.New("the daemon counted no probes (driftd_probes_total)")
	}
	perProbe := m.sum("driftd_mcp_requests_total", nil) / probes
	perRequest := float64(median(dCPU)) / perProbe
	reqRatio := perRequest / float64(median(bbCPU))
	ratio := median(dCPU) / median(bbCPU)
	fmt.Fprintf(h.out, "\ndriftd daemon CPU per MCP request (%d distinct tools) vs blackbox_exporter %s CPU per HTTP probe: both from /proc, %d interleaved rounds, same run, same load shape (%d targets %s, phases spread)\n",
		tools, blackboxVersion(bin), perProbeRounds, perProbeTargets, perProbeSchedule)
	if budget {
		benchgen.Budget(h.out, fmt.Sprintf("driftd CPU per MCP request (%d-tool server) / blackbox_exporter's per HTTP probe", tools), "≤ 0.5", fmt.Sprintf("%.2f", reqRatio), reqRatio <= 0.5)
	} else {
		h.printf("information, not a budget: the per-request ratio at %d distinct ~50-node tools is %.2f", tools, reqRatio)
	}
	h.printf("per probe (information): %.1f MCP requests a probe; driftd %v per MCP probe against blackbox_exporter's %v per HTTP probe, a ratio of %.2f",
		perProbe, dur(median(dCPU)), dur(median(bbCPU)), ratio)
	h.printf("driftd run: %d targets × %d distinct tools, %s, %d windows of %v: %d probes, all successful; CPU per request (median) %v",
		perProbeTargets, tools, perProbeSchedule, perProbeRounds, perProbeWindow, dProbes, dur(perRequest))
	h.printf("blackbox_exporter: %d targets' /probe?module=http_2xx of the bench server's /ok %s, as Prometheus scrapes them, %d windows of %v: %d probes, all probe_success 1; CPU per probe (median) %v",
		perProbeTargets, perProbeSchedule, perProbeRounds, perProbeWindow, bbProbes, dur(median(bbCPU)))
	h.printf("blackbox_exporter back to back (information, its best case: a busy process pays no idle wake-ups): %d × %d sequential probes, CPU per probe (median) %v",
		perProbeRounds, blackboxProbes, dur(median(bbSeq)))
	h.printf("server CPU per probe (information): MCP %v, HTTP %v", dur(median(dSrv)), dur(median(bbSrv)))
	return nil
}

// blackboxVersion is the exporter's version, from its --version line
// "blackbox_exporter, version 0.23.0 (branch: …)".
func blackboxVersion(bin string) string {
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	_, v, ok := strings.Cut(string(out), "version ")
	if !ok {
		return "(version unknown)"
	}
	return strings.Fields(v)[0]
}

// startBlackbox runs blackbox_exporter on a free loopback port with the
// http_2xx module and waits until it answers.
func (h *harness) startBlackbox(ctx context.Context, bin string) (*proc, string, error) {
	cfg, err := h.writeFile("blackbox/blackbox.yml", []byte(blackboxConfig))
	if err != nil {
		return nil, "", err
	}
	addr, err := freePort()
	if err != nil {
		return nil, "", err
	}
	p, err := h.start("blackbox_exporter", exec.Command(bin, "--config.file="+cfg, "--web.listen-address="+addr))
	if err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		if resp, err := control.Get(base + "/-/healthy"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, base, nil
			}
		}
		if err := p.alive(); err != nil {
			return nil, "", err
		}
		if time.Now().After(deadline) {
			return nil, "", fmt.Errorf("blackbox_exporter not healthy in 20s%s", p.tail())
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, "", err
		}
	}
}

// freePort returns a loopback address no one listens on now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// blackboxRound drives blackboxProbes probes one after the other and
// returns the exporter's and the server's CPU per probe: blackbox_exporter
// at its best, a busy process paying no idle wake-ups (information).
func blackboxRound(ctx context.Context, c *http.Client, probeURL string, pid int, srv *benchServer) (cpu, srvCPU time.Duration, err error) {
	cpu, srvCPU, err = cpuOver(pid, srv, func() error {
		for i := range blackboxProbes {
			if err := blackboxProbe(ctx, c, probeURL); err != nil {
				return fmt.Errorf("probe %d: %w", i, err)
			}
		}
		return nil
	})
	return cpu / blackboxProbes, srvCPU / blackboxProbes, err
}

// cpuOver runs work and returns the CPU that process pid and the bench
// server spent while it ran, both read from /proc.
func cpuOver(pid int, srv *benchServer, work func() error) (cpu, srvCPU time.Duration, err error) {
	c0, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	s0, err := srv.cpu()
	if err != nil {
		return 0, 0, err
	}
	if err := work(); err != nil {
		return 0, 0, err
	}
	c1, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	s1, err := srv.cpu()
	if err != nil {
		return 0, 0, err
	}
	return c1 - c0, s1 - s0, nil
}

// daemonWindow reads the daemon's CPU and its probes over a window and
// returns its and the server's CPU per probe. A failed probe in the window
// is a harness failure.
func daemonWindow(ctx context.Context, d *daemon, srv *benchServer, window time.Duration) (cpu, srvCPU time.Duration, probes int, err error) {
	m0, err := d.metrics(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	cpu, srvCPU, err = cpuOver(d.pid(), srv, func() error {
		prof := make(chan error, 1)
		if dir := os.Getenv("DRIFTD_BENCH_PROFILE"); dir != "" {
			// The daemon's CPU profile over the window, for go tool pprof.
			go func() {
				prof <- savePprof(ctx, d, fmt.Sprintf("profile?seconds=%d", int(window.Seconds())-1),
					filepath.Join(dir, fmt.Sprintf("%s-cpu.pprof", d.name)))
			}()
		} else {
			prof <- nil
		}
		if err := sleep(ctx, window); err != nil {
			return err
		}
		return <-prof
	})
	if err != nil {
		return 0, 0, 0, err
	}
	m1, err := d.metrics(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	if err := checkNoFailures(m0, m1); err != nil {
		return 0, 0, 0, err
	}
	n := int(m1.sum("driftd_probes_total", nil) - m0.sum("driftd_probes_total", nil))
	if n <= 0 {
		return 0, 0, 0, errors.New("driftd completed no probe in the window")
	}
	return cpu / time.Duration(n), srvCPU / time.Duration(n), n, nil
}

// checkNoFailures fails when a probe failed between two scrapes, naming
// the reasons: every probe of the bench server must succeed.
func checkNoFailures(before, after *scrape) error {
	b := before.byLabel("driftd_probe_failures_total", "reason", nil)
	var bad []string
	for reason, v := range after.byLabel("driftd_probe_failures_total", "reason", nil) {
		if v > b[reason] {
			bad = append(bad, fmt.Sprintf("%s ×%.0f", reason, v-b[reason]))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("driftd probes failed: %s", strings.Join(bad, ", "))
	}
	return nil
}

// waitProbes waits until the daemon has completed at least n probes.
func waitProbes(ctx context.Context, d *daemon, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		m, err := d.metrics(ctx)
		if err != nil {
			return err
		}
		if err := checkNoFailures(&scrape{}, m); err != nil {
			return err
		}
		got := m.sum("driftd_probes_total", nil)
		if got >= float64(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s completed %.0f probes in %v, want %d", d.name, got, limit, n)
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// blackboxPaced drives blackbox_exporter the way Prometheus does for a
// fleet: perProbeTargets scrapes of /probe, each target once every
// perProbeSchedule, their phases spread evenly over the interval, for one
// window, the same load shape as the daemon's. It returns the exporter's
// and the server's CPU per probe and the number of probes.
func blackboxPaced(ctx context.Context, c *http.Client, probeURL string, pid int, srv *benchServer, window time.Duration) (cpu, srvCPU time.Duration, probes int, err error) {
	cpu, srvCPU, err = cpuOver(pid, srv, func() error {
		start := time.Now()
		end := start.Add(window)
		var mu sync.Mutex
		var first error
		var wg sync.WaitGroup
		for i := range perProbeTargets {
			wg.Go(func() {
				for at := start.Add(perProbeEvery * time.Duration(i) / perProbeTargets); at.Before(end); at = at.Add(perProbeEvery) {
					if err := sleep(ctx, time.Until(at)); err != nil {
						return
					}
					err := blackboxProbe(ctx, c, probeURL)
					mu.Lock()
					if err != nil && first == nil {
						first = err
					}
					probes++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return first
	})
	if err != nil {
		return 0, 0, 0, err
	}
	return cpu / time.Duration(probes), srvCPU / time.Duration(probes), probes, nil
}

// blackboxProbe is one /probe scrape, which must report probe_success 1.
func blackboxProbe(ctx context.Context, c *http.Client, probeURL string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, probeURL, nil)
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("blackbox probe: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("\nprobe_success 1\n")) {
		return fmt.Errorf("blackbox probe failed: HTTP %d\n%.1000s", resp.StatusCode, b)
	}
	return nil
}
