package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	fillMaxRounds = 100
	fillWorkers   = 8
)

// fillRings runs every target of the daemons (ks[i] targets in ds[i])
// once per round, triggered through the API, until the log ring of each
// sampled target stops growing although it ran again, or until the
// deadline. It returns the first sample's ring length in lines, the
// rounds run and whether the rings were full.
func (h *harness) fillRings(ctx context.Context, ds []*daemon, ks []int, deadline time.Time) (lines, rounds int, full bool, err error) {
	type sample struct {
		d    *daemon
		name string
	}
	var samples []sample
	for i, d := range ds {
		for _, t := range []int{0, ks[i] / 2, ks[i] - 1} {
			samples = append(samples, sample{d, fmt.Sprintf("t%05d", t)})
		}
	}
	prevN := make([]int, len(samples))
	ringFull := make([]bool, len(ds))
	prevLast := make([]string, len(samples))
	for round := 1; round <= fillMaxRounds; round++ {
		start := time.Now()
		probes := 0
		for i, d := range ds {
			if ringFull[i] {
				continue // its ring is at its bound: runs would only churn it
			}
			n, err := runAll(ctx, d, ks[i])
			if err != nil {
				return 0, 0, false, err
			}
			probes += n
		}
		// The daemon's log ring is one for all targets, bounded by bytes:
		// full when it holds all but the last line's worth of its bound
		// (driftd_log_ring_bytes against driftd_log_ring_capacity_bytes).
		full := true
		for i, d := range ds {
			m, err := d.metrics(ctx)
			if err != nil {
				return 0, 0, false, err
			}
			held, bound := m.sum("driftd_log_ring_bytes", nil), m.sum("driftd_log_ring_capacity_bytes", nil)
			ringFull[i] = bound > 0 && held >= bound-4096
			full = full && ringFull[i]
		}
		for i, s := range samples {
			n, last, err := ringLines(ctx, s.d, s.name)
			if err != nil {
				return 0, 0, false, err
			}
			prevN[i], prevLast[i] = n, last
		}
		fmt.Fprintf(os.Stderr, "bench: ring fill round %d: %d runs in %v, ring of %s: %d lines\n",
			round, probes, time.Since(start).Round(100*time.Millisecond), samples[0].name, prevN[0])
		if full || time.Now().After(deadline) {
			return prevN[0], round, full, nil
		}
	}
	return 0, 0, false, fmt.Errorf("log rings still growing after %d runs of every target", fillMaxRounds)
}

// runAll triggers a run of each of the daemon's k targets and waits until
// every target that accepted has logged a finished run since. A target
// already running is left to finish its run. It returns the runs accepted.
func runAll(ctx context.Context, d *daemon, k int) (int, error) {
	if err := d.runs.update(); err != nil {
		return 0, err
	}
	before := maps.Clone(d.runs.finished)
	var (
		mu       sync.Mutex
		accepted []string
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan string)
	for range fillWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				ok, err := trigger(ctx, d, name)
				mu.Lock()
				if ok {
					accepted = append(accepted, name)
				}
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for i := range k {
		next <- fmt.Sprintf("t%05d", i)
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	n := len(accepted)
	deadline := time.Now().Add(15 * time.Minute)
	for {
		if err := d.runs.update(); err != nil {
			return 0, err
		}
		accepted = slices.DeleteFunc(accepted, func(t string) bool { return d.runs.finished[t] > before[t] })
		if len(accepted) == 0 {
			return n, nil
		}
		if err := d.alive(); err != nil {
			return 0, err
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s: %d triggered runs not finished in 15 minutes", d.name, len(accepted))
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// trigger asks for a run of one target: true if accepted, false if the
// target is already running (or waiting for a slot).
func trigger(ctx context.Context, d *daemon, name string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url+"/api/v1/targets/"+name+"/probe", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("X-Driftd-Request", "1") // docs/security.md
	resp, err := control.Do(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusAccepted:
		return true, nil
	case http.StatusConflict:
		return false, nil
	}
	return false, fmt.Errorf("%s: triggering %s: HTTP %d", d.name, name, resp.StatusCode)
}

// ringLines reads a target's kept log lines from its status page: how
// many, and the newest.
func ringLines(ctx context.Context, d *daemon, name string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+"/targets/"+name, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := control.Do(req)
	if err != nil {
		return 0, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, "", fmt.Errorf("%s: GET /targets/%s: HTTP %d", d.name, name, resp.StatusCode)
	}
	return parseRing(string(b))
}

// parseRing finds the log block of a target page.
func parseRing(page string) (int, string, error) {
	const open = `<pre class="log">`
	i := strings.Index(page, open)
	if i < 0 {
		if strings.Contains(page, "No log lines yet") {
			return 0, "", nil
		}
		return 0, "", fmt.Errorf("target page has no %s block: the harness needs updating", open)
	}
	body, _, ok := strings.Cut(page[i+len(open):], "</pre>")
	if !ok {
		return 0, "", fmt.Errorf("target page: %s is not closed", open)
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, html.UnescapeString(l))
		}
	}
	if len(lines) == 0 {
		return 0, "", nil
	}
	return len(lines), lines[len(lines)-1], nil
}

// waitEveryTargetRan waits at least least, then until every one of the
// daemon's n targets has finished a run since the call, for at most most.
// It returns how long it waited and how many targets had still not run:
// those are the lateness budget's business, not a harness failure.
func waitEveryTargetRan(ctx context.Context, d *daemon, n int, least, most time.Duration) (time.Duration, int, error) {
	start := time.Now()
	if err := d.runs.update(); err != nil {
		return 0, 0, err
	}
	before := maps.Clone(d.runs.finished)
	if err := sleep(ctx, least); err != nil {
		return 0, 0, err
	}
	for {
		if err := d.runs.update(); err != nil {
			return 0, 0, err
		}
		if err := d.alive(); err != nil {
			return 0, 0, err
		}
		waiting := 0
		for i := range n {
			t := fmt.Sprintf("t%05d", i)
			if d.runs.finished[t] <= before[t] {
				waiting++
			}
		}
		if waiting == 0 || time.Since(start) >= most {
			return time.Since(start), waiting, nil
		}
		if err := sleep(ctx, time.Second); err != nil {
			return 0, 0, err
		}
	}
}
