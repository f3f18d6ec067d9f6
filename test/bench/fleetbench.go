package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/test/bench/toolset"
)

const (
	fleetTargets  = 100_000
	fleetSchedule = "@every 5m"
	fleetPeriod   = 5 * time.Minute
	fleetPorts    = 64 // the bench server's listeners, targets spread over them
	fleetShards   = 4
)

// fleetBench runs benchgen's fleet of distinct servers — 100,000 by
// default (DRIFTD_BENCH_FLEET_TARGETS) at @every 5m — on one replica, then
// over fleetShards replicas (--shard i/N) on the same machine, and prints
// the fleet budgets of issue 40 measured over one steady window
// (DRIFTD_BENCH_FLEET_WINDOW, default one period). Each phase waits a
// period for every target's first run, then DRIFTD_BENCH_FLEET_DRAIN
// (default one period) for the first runs' state and snapshot writes to
// drain. Log rings are not filled first: the RSS is of a fresh daemon
// with one period of runs in its ring.
func (h *harness) fleetBench(ctx context.Context) error {
	n, window, drain, shards, err := fleetEnv()
	if err != nil {
		return err
	}
	dir, mfs, err := h.writeFleet(ctx, n)
	if err != nil {
		return err
	}
	srv, err := h.startFleetServer(ctx, "1", false, fleetPorts, dir)
	if err != nil {
		return err
	}
	// The replicas start on a one-tool manifest and server and are then
	// reloaded onto the fleet: a daemon started on 20,000 distinct
	// manifests ran targets for minutes before it listened.
	fillSrv, err := h.startServer(ctx, "1", false, fleetPorts)
	if err != nil {
		return err
	}
	fillMF, err := h.writeFile("fleet-fill.json", toolset.Manifest(0, 1))
	if err != nil {
		return err
	}
	tools, drifting := fleetTotals(n)
	fmt.Fprintf(h.out, "\nfleet: driftd run, %d distinct servers on %s, each its own manifest (%d tools, %.1f a target on average; %d drifting); bench server in its own process on %d ports; steady window %v after a %v drain\n",
		n, fleetSchedule, tools, float64(tools)/float64(n), drifting, fleetPorts, window, drain)
	f := fleet{n: n, schedule: fleetSchedule, manifests: mfs}
	for _, k := range []int{1, shards} {
		if k == 0 {
			continue
		}
		r, err := h.fleetRun(ctx, srv, fillSrv, fillMF, f, k, window, drain)
		if err != nil {
			return fmt.Errorf("%d replica(s): %w%s", k, err, srv.tail())
		}
		h.printFleet(r)
	}
	return nil
}

// fleetEnv reads DRIFTD_BENCH_FLEET_TARGETS, _WINDOW, _DRAIN and _SHARDS.
func fleetEnv() (n int, window, drain time.Duration, shards int, err error) {
	n, window, drain, shards = fleetTargets, fleetPeriod, fleetPeriod, fleetShards
	if v := os.Getenv("DRIFTD_BENCH_FLEET_TARGETS"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 20 || n > 100_000 {
			return 0, 0, 0, 0, fmt.Errorf("DRIFTD_BENCH_FLEET_TARGETS=%q: want a number in 20..100000", v)
		}
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
	}{{"DRIFTD_BENCH_FLEET_WINDOW", &window}, {"DRIFTD_BENCH_FLEET_DRAIN", &drain}} {
		if v := os.Getenv(d.name); v != "" {
			if *d.v, err = time.ParseDuration(v); err != nil || *d.v < 0 || (d.v == &window && *d.v < 10*time.Second) {
				return 0, 0, 0, 0, fmt.Errorf("%s=%q: want a duration (a window of at least 10s)", d.name, v)
			}
		}
	}
	if v := os.Getenv("DRIFTD_BENCH_FLEET_SHARDS"); v != "" {
		if shards, err = strconv.Atoi(v); err != nil || shards < 0 || shards == 1 || shards > 16 {
			return 0, 0, 0, 0, fmt.Errorf("DRIFTD_BENCH_FLEET_SHARDS=%q: want 0 (none) or 2..16", v)
		}
	}
	return n, window, drain, shards, nil
}

// fleetReport is one phase of the fleet run: k replicas.
type fleetReport struct {
	n, k               int
	window             time.Duration
	settled            time.Duration
	unsettled          int
	rss                []int64
	cpu                time.Duration // all replicas
	srvCPU             time.Duration
	probes, skipped    float64
	lateness           []bucket // all replicas' observations in the window
	latenessMissing    bool
	scrapeMedian       []time.Duration // per replica, of 3
	size, series       []int           // per replica, the last scrape
	success, failed    float64
	heap               float64
	startedAt, tookAll time.Duration
	// servedTools is driftd_tools{source="served"} over the replicas at
	// the end, of wantTools: below it, not every target had listed.
	servedTools float64
	wantTools   int
}

// fleetRun starts k replicas (--shard i/k when k > 1) of the fleet and
// measures them; it stops them before it returns.
func (h *harness) fleetRun(ctx context.Context, srv, fillSrv *benchServer, fillMF string, f fleet, k int, steady, drain time.Duration) (r fleetReport, err error) {
	defer h.stopSince(len(h.procs))
	start := time.Now()
	r = fleetReport{n: f.n, k: k, window: steady}
	var ds []*daemon
	for i := range k {
		var extra []string
		if k > 1 {
			extra = []string{fmt.Sprintf("--shard=%d/%d", i, k)}
		}
		d, err := h.startDaemon(ctx, fmt.Sprintf("driftd-fleet-%d-of-%d", i, k), fillSrv, fleet{n: f.n, schedule: f.schedule, manifests: []string{fillMF}}, extra...)
		if err != nil {
			return r, err
		}
		ds = append(ds, d)
	}
	for _, d := range ds {
		if err := d.reload(srv, f); err != nil {
			return r, err
		}
	}
	r.startedAt = time.Since(start)
	if r.settled, r.unsettled, err = waitFleetRan(ctx, ds, f.n, fleetPeriod+5*time.Second, 2*fleetPeriod); err != nil {
		return r, err
	}
	if err := sleep(ctx, drain); err != nil {
		return r, err
	}
	ws := make([]window, k)
	errs := make(chan error, k)
	for i, d := range ds {
		go func() {
			var err error
			ws[i], err = measureWindow(ctx, d, srv, steady)
			errs <- err
		}()
	}
	for range k {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if err != nil {
		return r, err
	}
	for i, w := range ws {
		r.cpu += w.cpu
		r.probes += w.probes
		r.skipped += w.skipped
		r.latenessMissing = r.latenessMissing || w.latenessMissing
		if i == 0 {
			r.srvCPU = w.srvCPU
			r.lateness = w.lateness
			continue
		}
		r.lateness = addBuckets(r.lateness, w.lateness)
	}
	served := 0.0
	for _, d := range ds {
		ss, err := timeScrapes(ctx, d, 3)
		if err != nil {
			return r, err
		}
		var took []time.Duration
		for _, s := range ss {
			took = append(took, s.took)
		}
		last := ss[len(ss)-1]
		r.scrapeMedian = append(r.scrapeMedian, time.Duration(median(took)))
		r.size = append(r.size, last.size)
		r.series = append(r.series, last.series())
		r.success += last.sum("driftd_probes_total", map[string]string{"result": "success"})
		r.failed += last.sum("driftd_probes_total", map[string]string{"result": "failure"})
		r.heap += last.sum("go_memstats_heap_inuse_bytes", nil)
		served += last.sum("driftd_tools", map[string]string{"source": "served"})
		rss, err := procRSS(d.pid())
		if err != nil {
			return r, err
		}
		r.rss = append(r.rss, rss)
	}
	// A daemon that could not keep up has not listed every server yet:
	// that is a figure to print (the budget lines say NOT MET), not a
	// harness failure. A sum over the fleet's tools is a failure.
	want, _ := fleetTotals(f.n)
	r.servedTools, r.wantTools = served, want
	if served > float64(want) {
		return r, fmt.Errorf("driftd_tools{source=\"served\"} sums to %.0f over the replicas, more than the fleet's %d", served, want)
	}
	for _, d := range ds {
		if err := d.alive(); err != nil {
			return r, err
		}
	}
	r.tookAll = time.Since(start)
	return r, nil
}

// waitFleetRan waits at least least, then until every one of the n
// targets has finished a run since the call on one of the replicas, for
// at most most. It returns how long it waited and how many had not run.
func waitFleetRan(ctx context.Context, ds []*daemon, n int, least, most time.Duration) (time.Duration, int, error) {
	start := time.Now()
	// Runs finished before now were on the placeholder server: a target
	// has run on the fleet once it has finished one more.
	before := make([]map[string]int, len(ds))
	for i, d := range ds {
		if err := d.runs.update(); err != nil {
			return 0, 0, err
		}
		before[i] = maps.Clone(d.runs.finished)
	}
	if err := sleep(ctx, least); err != nil {
		return 0, 0, err
	}
	for {
		ran := map[string]bool{}
		for i, d := range ds {
			if err := d.runs.update(); err != nil {
				return 0, 0, err
			}
			if err := d.alive(); err != nil {
				return 0, 0, err
			}
			for t, c := range d.runs.finished {
				if c > before[i][t] {
					ran[t] = true
				}
			}
		}
		waiting := n - len(ran)
		if waiting <= 0 || time.Since(start) >= most {
			return time.Since(start), max(waiting, 0), nil
		}
		if err := sleep(ctx, 5*time.Second); err != nil {
			return 0, 0, err
		}
	}
}

func (h *harness) printFleet(r fleetReport) {
	cores := float64(runtime.NumCPU())
	var rssSum, rssMax int64
	for _, v := range r.rss {
		rssSum += v
		rssMax = max(rssMax, v)
	}
	var scrapeMax time.Duration
	sizeMax, seriesSum := 0, 0
	for i := range r.scrapeMedian {
		scrapeMax = max(scrapeMax, r.scrapeMedian[i])
		sizeMax = max(sizeMax, r.size[i])
		seriesSum += r.series[i]
	}
	label := "one replica"
	if r.k > 1 {
		label = fmt.Sprintf("%d replicas (--shard i/%d) on the same machine", r.k, r.k)
	}
	fmt.Fprintf(h.out, "fleet on %s:\n", label)
	rssWhat, cpuWhat := "RSS", "daemon CPU"
	if r.k > 1 {
		rssWhat, cpuWhat = "RSS, all replicas together", "CPU of all replicas together"
	}
	h.budgetLine(rssWhat, "≤ 2 GiB", fmt.Sprintf("%.2f GiB (%.1f KiB a target)", float64(rssSum)/(1<<30), float64(rssSum)/float64(r.n)/1024), rssSum <= 2<<30)
	pct := 100 * r.cpu.Seconds() / (r.window.Seconds() * cores)
	h.budgetLine(fmt.Sprintf("%s, %% of the machine (%d cores) over the steady window", cpuWhat, runtime.NumCPU()), "≤ 50 %",
		fmt.Sprintf("%.1f %% (under contention: the machine is shared)", pct), pct <= 50)
	if r.latenessMissing {
		h.budgetLine("p99 start lateness over the steady window", "< 5 s", "metric missing: "+latenessName, false)
	} else {
		p99 := quantile(0.99, r.lateness)
		h.budgetLine("p99 start lateness over the steady window", "< 5 s",
			fmt.Sprintf("%s (%.0f runs started)", fmtSeconds(p99), r.lateness[len(r.lateness)-1].count), !math.IsNaN(p99) && p99 < 5)
	}
	scrapeWhat := "/metrics scrape, full body (median of 3)"
	if r.k > 1 {
		scrapeWhat = "/metrics scrape of the slowest replica, full body (median of 3)"
	}
	h.budgetLine(scrapeWhat, "< 2 s", fmt.Sprintf("%s, %.1f MiB", dur(float64(scrapeMax)), mib(int64(sizeMax))), scrapeMax < 2*time.Second)
	h.printf("series: %d, %.1f per target; /metrics %s", seriesSum, float64(seriesSum)/float64(r.n), sizesMiB(r.size))
	if r.k > 1 {
		h.printf("RSS per replica: %s MiB (largest %.1f MiB); scrape medians %s", rssMiB(r.rss), mib(rssMax), durs(r.scrapeMedian))
	}
	h.printf("Go heap in use (information): %.1f MiB, %.1f KiB a target", r.heap/(1<<20), r.heap/float64(r.n)/1024)
	h.printf("probes in the steady window: %.0f (%.0f expected from the schedule), %.0f skipped; in the whole phase %.0f successful, %.0f failed",
		r.probes, float64(r.n)*r.window.Seconds()/fleetPeriod.Seconds(), r.skipped, r.success, r.failed)
	if r.unsettled > 0 {
		h.printf("%d targets had not run %v after the start", r.unsettled, r.settled.Round(time.Second))
	}
	if r.servedTools < float64(r.wantTools) {
		h.printf("NOT EVERY TARGET LISTED ITS SERVER: driftd_tools{source=\"served\"} sums to %.0f of the fleet's %d tools (%.0f %%) at the end of the phase: the daemon did not keep up with the schedule",
			r.servedTools, r.wantTools, 100*r.servedTools/float64(r.wantTools))
	}
	h.printf("server CPU in the steady window (information): %.1f %% of the machine", 100*r.srvCPU.Seconds()/(r.window.Seconds()*cores))
	h.printf("phases: start and reload onto the fleet %v, first run of every target %v, steady window %v; whole phase %v",
		r.startedAt.Round(time.Second), r.settled.Round(time.Second), r.window, r.tookAll.Round(time.Second))
}

// budgetLine is a benchgen.Budget line of the harness's output.
func (h *harness) budgetLine(budget, goal, measured string, met bool) {
	benchgen.Budget(h.out, budget, goal, measured, met)
}

func sizesMiB(xs []int) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%.1f MiB", mib(int64(x)))
	}
	return out
}

func rssMiB(xs []int64) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " / "
		}
		out += fmt.Sprintf("%.1f", mib(x))
	}
	return out
}
