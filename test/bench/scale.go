package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/test/bench/toolset"
)

const (
	scaleTargets  = 10_000
	scaleSchedule = "@every 60s"
	scalePeriod   = 60 * time.Second
	scaleWindow   = 60 * time.Second // the steady window: one whole period
	latenessName  = "driftd_scheduler_start_lateness_seconds"
	scalePorts    = 16 // the bench servers' listeners, targets spread over them
)

// scaleSets are the replica shape's shared manifests' sizes: distinct
// tools in each.
var scaleSets = []int{20, 25, 30, 40, 50}

// shape is how a scale run's targets declare and serve their tools.
type shape struct {
	info      bool     // printed as information, not as the budget
	manifests []string // target i is declared by manifests[i mod len]
	srv       *benchServer
	served    func(i int) int // the tools target i serves
	describe  string
}

// scale runs driftd with 10,000 targets (DRIFTD_BENCH_TARGETS overrides)
// and a small baseline daemon, both with full log rings, and prints the
// scale budgets of DESIGN §14 measured over one steady period: first with
// a fleet of distinct servers, each its own manifest (benchgen.Fleet) —
// the budget — then, unless DRIFTD_BENCH_REPLICA=0, with replicas of five
// servers sharing five manifests, as information.
func (h *harness) scale(ctx context.Context) error {
	n, base, fillFor, err := scaleEnv()
	if err != nil {
		return err
	}
	dir, mfs, err := h.writeFleet(ctx, n)
	if err != nil {
		return err
	}
	srv, err := h.startFleetServer(ctx, "1", false, scalePorts, dir)
	if err != nil {
		return err
	}
	tools, drifting := fleetTotals(n)
	distinct := shape{manifests: mfs, srv: srv, served: func(i int) int { return benchgen.Fleet(i).Tools },
		describe: fmt.Sprintf("%d distinct servers, each its own manifest (%d tools, %.1f a target on average, %d–%d; %d drifting)",
			n, tools, float64(tools)/float64(n), benchgen.FleetMinTools, benchgen.FleetMaxTools, drifting)}
	if err := h.scaleRun(ctx, distinct, n, base, fillFor); err != nil {
		return err
	}
	if os.Getenv("DRIFTD_BENCH_REPLICA") == "0" {
		return nil
	}
	real, err := h.scaleManifests()
	if err != nil {
		return err
	}
	sets := make([]string, len(scaleSets))
	for s, k := range scaleSets {
		sets[s] = strconv.Itoa(k)
	}
	if srv, err = h.startServer(ctx, strings.Join(sets, ","), false, scalePorts); err != nil {
		return err
	}
	replica := shape{info: true, manifests: real, srv: srv, served: func(i int) int { return scaleSets[i%len(scaleSets)] },
		describe: fmt.Sprintf("replicas of %d servers sharing %d manifests (%s distinct tools)", len(scaleSets), len(scaleSets), ints(scaleSets))}
	return h.scaleRun(ctx, replica, n, base, fillFor)
}

// scaleRun measures one shape; it stops every process it and the shape's
// server started before it returns.
func (h *harness) scaleRun(ctx context.Context, sh shape, n, base int, fillFor time.Duration) (err error) {
	defer h.stopSince(len(h.procs) - 1) // the shape's server, started before
	start := time.Now()
	fillMF, err := h.writeFile("scale/manifest-fill.json", toolset.Manifest(0, 1))
	if err != nil {
		return err
	}
	srv := sh.srv
	fillSrv, err := h.startServer(ctx, "1", false, scalePorts)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil { // the servers' own words, if they had any
			err = fmt.Errorf("%w%s%s", err, srv.tail(), fillSrv.tail())
		}
	}()
	fill := func(k int) fleet { return fleet{n: k, schedule: scaleSchedule, manifests: []string{fillMF}} }
	big, err := h.startDaemon(ctx, "driftd-scale", fillSrv, fill(n))
	if err != nil {
		return err
	}
	small, err := h.startDaemon(ctx, "driftd-baseline", fillSrv, fill(base))
	if err != nil {
		return err
	}

	// Full rings first, as cheaply as runs allow: every target is run on a
	// one-tool server until its log ring stops growing (or the fill time
	// is up: the RSS line then says so and is not met), then both daemons
	// are reloaded onto the real manifests and server.
	r := scaleReport{n: n, base: base, shape: sh}
	if r.ring, r.rounds, r.full, err = h.fillRings(ctx, []*daemon{big, small}, []int{n, base}, start.Add(fillFor)); err != nil {
		return err
	}
	r.fillTook = time.Since(start)
	for _, d := range []struct {
		d *daemon
		k int
	}{{big, n}, {small, base}} {
		if err := d.d.reload(srv, fleet{n: d.k, schedule: scaleSchedule, manifests: sh.manifests}); err != nil {
			return err
		}
	}
	// One period for every target's first run on the real server (a new
	// schedule restarts each target's timing), a little more for stragglers.
	if r.settled, r.unsettled, err = waitEveryTargetRan(ctx, big, n, scalePeriod+5*time.Second, 3*scalePeriod); err != nil {
		return err
	}
	h.stopProc(fillSrv.proc) // runs that started before the reload are over
	// The reload restarted every schedule and its first runs wrote every
	// target's state and snapshot: one more whole period, always the
	// same, lets that backlog drain before the steady period is measured.
	if err := sleep(ctx, scalePeriod); err != nil {
		return err
	}
	if err := measureSteady(ctx, &r, big, small, srv); err != nil {
		return err
	}
	r.took = time.Since(start)
	h.printScale(r)
	return nil
}

// scaleEnv reads DRIFTD_BENCH_TARGETS and DRIFTD_BENCH_FILL.
func scaleEnv() (n, base int, fillFor time.Duration, err error) {
	n, fillFor = scaleTargets, 30*time.Minute
	if v := os.Getenv("DRIFTD_BENCH_TARGETS"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 20 {
			return 0, 0, 0, fmt.Errorf("DRIFTD_BENCH_TARGETS=%q: want a number ≥ 20", v)
		}
	}
	if v := os.Getenv("DRIFTD_BENCH_FILL"); v != "" {
		if fillFor, err = time.ParseDuration(v); err != nil {
			return 0, 0, 0, fmt.Errorf("DRIFTD_BENCH_FILL=%q: %w", v, err)
		}
	}
	return n, min(100, n/10), fillFor, nil
}

// scaleManifests writes the replica shape's shared manifests.
func (h *harness) scaleManifests() (real []string, err error) {
	for s, k := range scaleSets {
		mf, err := h.writeFile(fmt.Sprintf("scale/manifest-%d.json", s), toolset.Manifest(s, k))
		if err != nil {
			return nil, err
		}
		real = append(real, mf)
	}
	return real, nil
}

// measureSteady measures one steady period of the big daemon, then its
// scrapes, its ring and both daemons' memory, into r.
func measureSteady(ctx context.Context, r *scaleReport, big, small *daemon, srv *benchServer) error {
	var err error
	prof := profileWindow(ctx, big, scaleWindow)
	if r.w, err = measureWindow(ctx, big, srv, scaleWindow); err != nil {
		return err
	}
	if err := <-prof; err != nil {
		return err
	}
	if r.scrapes, err = timeScrapes(ctx, big, 5); err != nil {
		return err
	}
	r.total = r.scrapes[len(r.scrapes)-1]
	if err := checkServed(r.total, r.n, r.shape.served); err != nil {
		return err
	}
	if r.ringEnd, _, err = ringLines(ctx, big, "t00000"); err != nil {
		return err
	}
	if r.rssBig, err = procRSS(big.pid()); err != nil {
		return err
	}
	if r.rssSmall, err = procRSS(small.pid()); err != nil {
		return err
	}
	if r.baseline, err = small.metrics(ctx); err != nil {
		return err
	}
	for _, p := range []*proc{big.proc, small.proc, srv.proc} {
		if err := p.alive(); err != nil {
			return err
		}
	}
	return nil
}

// profileWindow, when DRIFTD_BENCH_PROFILE names a directory, saves the
// big daemon's CPU profile over the steady window (less a second), five
// seconds of its execution trace and its heap profile after the window
// there, for `go tool pprof` and `go tool trace`.
func profileWindow(ctx context.Context, d *daemon, dur time.Duration) <-chan error {
	done := make(chan error, 1)
	dir := os.Getenv("DRIFTD_BENCH_PROFILE")
	if dir == "" {
		done <- nil
		return done
	}
	traced := make(chan error, 1)
	go func() { // five seconds of execution trace, ten into the window
		if err := sleep(ctx, 10*time.Second); err != nil {
			traced <- err
			return
		}
		traced <- savePprof(ctx, d, "trace?seconds=5", filepath.Join(dir, "trace.out"))
	}()
	go func() {
		err := savePprof(ctx, d, fmt.Sprintf("profile?seconds=%d", int(dur.Seconds())-1), filepath.Join(dir, "cpu.pprof"))
		if err == nil {
			err = savePprof(ctx, d, "heap", filepath.Join(dir, "heap.pprof"))
		}
		done <- errors.Join(err, <-traced)
	}()
	return done
}

func savePprof(ctx context.Context, d *daemon, what, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+"/debug/pprof/"+what, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("pprof %s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof %s: HTTP %d", what, resp.StatusCode)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// window is what the steady window measured.
type window struct {
	cpu, srvCPU     time.Duration
	probes, skipped float64
	lateness        []bucket // observations in the window
	latenessMissing bool
}

// measureWindow reads the daemon's CPU, probes, skips and lateness
// histogram over one steady window; a failed probe is a harness failure.
func measureWindow(ctx context.Context, d *daemon, srv *benchServer, dur time.Duration) (window, error) {
	var w window
	m0, err := d.metrics(ctx)
	if err != nil {
		return w, err
	}
	c0, err := procCPU(d.pid())
	if err != nil {
		return w, err
	}
	s0, err := srv.cpu()
	if err != nil {
		return w, err
	}
	if err := sleep(ctx, dur); err != nil {
		return w, err
	}
	c1, err := procCPU(d.pid())
	if err != nil {
		return w, err
	}
	s1, err := srv.cpu()
	if err != nil {
		return w, err
	}
	m1, err := d.metrics(ctx)
	if err != nil {
		return w, err
	}
	if err := checkNoFailures(m0, m1); err != nil {
		return w, err
	}
	w.cpu, w.srvCPU = c1-c0, s1-s0
	w.probes = m1.sum("driftd_probes_total", nil) - m0.sum("driftd_probes_total", nil)
	w.skipped = m1.sum("driftd_probe_skipped_total", nil) - m0.sum("driftd_probe_skipped_total", nil)
	b1, ok1 := m1.histogram(latenessName)
	b0, ok0 := m0.histogram(latenessName)
	if !ok1 || !ok0 {
		w.latenessMissing = true
		return w, nil
	}
	w.lateness = deltaBuckets(b1, b0)
	return w, nil
}

// timeScrapes scrapes /metrics k times, each body read in full into one
// buffer, after one untimed scrape that sizes it. The harness collects its
// garbage before each (the last scrape's parse left some hundreds of MB of
// it), so that its own collector does not run inside the timed window.
func timeScrapes(ctx context.Context, d *daemon, k int) ([]*scrape, error) {
	var buf bytes.Buffer
	if _, err := d.metricsInto(ctx, &buf); err != nil {
		return nil, err
	}
	var out []*scrape
	for range k {
		runtime.GC()
		s, err := d.metricsInto(ctx, &buf)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// checkServed holds that every target's last successful listing came from
// the real server with its own tools: the sum of driftd_tools{source=
// "served"} is what the n targets' served(i) add up to.
func checkServed(s *scrape, n int, served func(int) int) error {
	want := 0
	for i := range n {
		want += served(i)
	}
	if got := s.sum("driftd_tools", map[string]string{"source": "served"}); got != float64(want) {
		return fmt.Errorf("driftd_tools{source=\"served\"} sums to %.0f, want %d: not every target listed the real server", got, want)
	}
	return nil
}

// scaleReport is everything printScale prints.
type scaleReport struct {
	shape             shape
	n, base           int
	ring, ringEnd     int
	full              bool
	rounds, unsettled int
	fillTook, settled time.Duration
	took              time.Duration
	w                 window
	scrapes           []*scrape
	rssBig, rssSmall  int64
	total, baseline   *scrape
}

func (h *harness) printScale(r scaleReport) {
	what := "the budget"
	if r.shape.info {
		what = "information only, not the budget: content-keyed memos serve shared manifests"
	}
	fmt.Fprintf(h.out, "\nscale (%s): driftd run, %d targets on %s, %s; bench server in its own process; baseline daemon %d targets\n",
		what, r.n, scaleSchedule, r.shape.describe, r.base)
	// The replica shape's lines are marked, so that no reader (or grep
	// for NOT MET) takes them for the budget's.
	budget := func(b, goal, measured string, met bool) {
		if r.shape.info {
			fmt.Fprint(h.out, "info: ")
		}
		benchgen.Budget(h.out, b, goal, measured, met)
	}

	perTarget := float64(r.rssBig-r.rssSmall) / float64(r.n-r.base)
	// Full: the fill saw both daemons' rings at their bound, and they
	// still are at the end.
	ringFull := func(s *scrape) bool {
		bound := s.sum("driftd_log_ring_capacity_bytes", nil)
		return bound > 0 && s.sum("driftd_log_ring_bytes", nil) >= bound-4096
	}
	full := r.full && ringFull(r.total) && ringFull(r.baseline)
	verdict := perTarget <= 20*1024 && full
	measured := fmt.Sprintf("%.1f KiB", perTarget/1024)
	if !full {
		measured += fmt.Sprintf(" (log rings NOT full after %d runs of every target; a lower bound)", r.rounds)
	}
	budget(fmt.Sprintf("RSS per target beyond the %d-target baseline, full log rings", r.base), "≤ 20 KiB", measured, verdict)

	var took []time.Duration
	for _, s := range r.scrapes {
		took = append(took, s.took)
	}
	st := time.Duration(median(took))
	last := r.scrapes[len(r.scrapes)-1]
	budget("/metrics scrape, full body (median of 5)", "≤ 300 ms", dur(float64(st)).String(), st <= 300*time.Millisecond)

	pct := 100 * r.w.cpu.Seconds() / (scaleWindow.Seconds() * float64(runtime.NumCPU()))
	budget(fmt.Sprintf("daemon CPU, %% of the machine (%d cores) over one steady period", runtime.NumCPU()), "≤ 25 %",
		fmt.Sprintf("%.1f %%", pct), pct <= 25)

	switch {
	case r.w.latenessMissing:
		budget("p99 start lateness over one steady period", "< 1 s", "NOT MET (metric missing: "+latenessName+")", false)
	default:
		p99 := quantile(0.99, r.w.lateness)
		runs := r.w.lateness[len(r.w.lateness)-1].count
		budget("p99 start lateness over one steady period", "< 1 s",
			fmt.Sprintf("%s (%.0f runs started)", fmtSeconds(p99), runs), !math.IsNaN(p99) && p99 < 1)
	}

	h.printf("probes in the steady window: %.0f (%.0f expected from the schedule), %.0f skipped (due while the previous run still ran or waited), 0 failed",
		r.w.probes, float64(r.n)*scaleWindow.Seconds()/scalePeriod.Seconds(), r.w.skipped)
	h.printf("probes in the whole run: %.0f successful, %.0f failed; every target ran at least %s",
		r.total.sum("driftd_probes_total", map[string]string{"result": "success"}),
		r.total.sum("driftd_probes_total", map[string]string{"result": "failure"}), minRuns(r.total))
	h.printf("RSS: %d targets %.1f MiB, baseline %d targets %.1f MiB; log ring (one per daemon): %.1f / %.1f MiB, %.1f / %.1f MiB; t00000's lines in it: %d (%d rounds of triggered runs of every target on a one-tool server first; full: %v)",
		r.n, mib(r.rssBig), r.base, mib(r.rssSmall),
		r.total.sum("driftd_log_ring_bytes", nil)/(1<<20), r.total.sum("driftd_log_ring_capacity_bytes", nil)/(1<<20),
		r.baseline.sum("driftd_log_ring_bytes", nil)/(1<<20), r.baseline.sum("driftd_log_ring_capacity_bytes", nil)/(1<<20),
		r.ringEnd, r.rounds, full)
	heap := func(s *scrape) float64 { return s.sum("go_memstats_heap_inuse_bytes", nil) }
	h.printf("Go heap in use (information: RSS less GC headroom and runtime): %d targets %.1f MiB, baseline %.1f MiB; %.1f KiB per target",
		r.n, mib(int64(heap(r.total))), mib(int64(heap(r.baseline))), (heap(r.total)-heap(r.baseline))/float64(r.n-r.base)/1024)
	// What RSS holds beside the heap in use: the collector's next goal
	// (its headroom over the live heap) and the free pages the runtime
	// has not yet given back to the system.
	retained := func(s *scrape) float64 {
		return s.sum("go_memstats_heap_idle_bytes", nil) - s.sum("go_memstats_heap_released_bytes", nil)
	}
	h.printf("Go heap of the %d targets (information): next GC at %.1f MiB; free pages not yet returned to the system %.1f MiB (baseline %.1f MiB)",
		r.n, mib(int64(r.total.sum("go_memstats_next_gc_bytes", nil))), mib(int64(retained(r.total))), mib(int64(retained(r.baseline))))
	if r.unsettled > 0 {
		h.printf("%d targets had not run on the real server %v after the reload", r.unsettled, r.settled.Round(time.Second))
	}
	h.printf("/metrics: %d series, %.1f MiB; scrapes %s", last.series(), mib(int64(last.size)), durs(took))
	h.printf("server CPU in the steady window (information): %.1f %% of the machine", 100*r.w.srvCPU.Seconds()/(scaleWindow.Seconds()*float64(runtime.NumCPU())))
	h.printf("phases: ring fill %v, settle on the real server %v, one period %v, steady window %v; whole run %v",
		r.fillTook.Round(time.Second), r.settled.Round(time.Second), scalePeriod, scaleWindow, r.took.Round(time.Second))
}

// minRuns is the fewest probes any one target had, as text.
func minRuns(s *scrape) string {
	per := s.byLabel("driftd_probes_total", "target", nil)
	least := math.Inf(1)
	for _, v := range per {
		least = min(least, v)
	}
	if len(per) == 0 {
		return "0 times"
	}
	return fmt.Sprintf("%.0f times", least)
}

func fmtSeconds(s float64) string {
	if math.IsNaN(s) {
		return "no runs"
	}
	return dur(s * float64(time.Second)).String()
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func ints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, "/")
}

func durs(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = dur(float64(d)).String()
	}
	return strings.Join(parts, " ")
}

// writeFleet writes the manifests of benchgen's fleet targets 0..n-1 as
// DIR/i.json, which the bench server reads back to serve them, on as many
// workers as the machine has cores.
func (h *harness) writeFleet(ctx context.Context, n int) (dir string, manifests []string, err error) {
	dir = filepath.Join(h.tmp, "fleet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	manifests = make([]string, n)
	for i := range manifests {
		manifests[i] = filepath.Join(dir, strconv.Itoa(i)+".json")
	}
	start := time.Now()
	workers := runtime.NumCPU()
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := w; i < n; i += workers {
				if err := ctx.Err(); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(manifests[i], benchgen.FleetManifest(i), 0o644); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		err = errors.Join(err, <-errs)
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %d fleet manifests in %v\n", n, time.Since(start).Round(100*time.Millisecond))
	return dir, manifests, err
}

// fleetTotals is the tools fleet targets 0..n-1 declare, and how many of
// them drift.
func fleetTotals(n int) (tools, drifting int) {
	for i := range n {
		f := benchgen.Fleet(i)
		tools += f.Tools
		if f.Drifting {
			drifting++
		}
	}
	return tools, drifting
}

// stopSince stops the children started from index k of h.procs on.
func (h *harness) stopSince(k int) {
	for len(h.procs) > max(k, 0) {
		h.stopProc(h.procs[len(h.procs)-1])
	}
}
