package faults_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Growth slack of the daemon over the sampling window: the floor of the
// second half may exceed the floor of the first by at most 50 % + 20
// (goroutines, fds) and 50 % + 64 MiB (resident memory). Runs of slow
// targets overlap differently from sample to sample; the leak this was
// written against doubled them in 12 s (218 → 436 goroutines).
const (
	growthPct  = 50
	growthAbs  = 20
	rssGrowPct = 50
	rssGrowAbs = 64 << 20
	// maxRunBytes is max_run_bytes' default, a snapshot's bound.
	maxRunBytes = 64 << 20
	// warmUp lets every behaviour run a few times before the first sample:
	// resident memory climbs for several seconds while the GC's heap goal
	// grows with the hostile runs (64 MiB bodies at @every 1s). At 6 s a
	// CI run's first sample caught 402 MiB, the next 884 MiB, and the
	// growth check compared the ramp, not a leak.
	warmUp      = 10 * time.Second
	sampleEvery = 2 * time.Second
	defaultSpan = 12 * time.Second
)

// Known failures of the daemon checks; each skips with the measurement.
var growthKnown = map[string]string{} // none today

// TestDaemon runs `driftd run` with every behaviour as a target at
// @every 1s, timeout 2s, the marker as each target's bearer credential;
// after a warm-up it samples the daemon's goroutines, open fds and
// resident memory from /metrics over 12 s (TestSoak: minutes), then searches every endpoint, status page, state file and log
// line for the marker and holds each to its size bound.
func TestDaemon(t *testing.T) {
	needBinary(t)
	if raceEnabled {
		t.Skip("the race detector slows the hostile servers too much for the daemon's bounds; make faults runs it")
	}
	daemonSuite(t, defaultSpan)
}

// TestSoak is TestDaemon with a sampling window of DRIFTD_SOAK (e.g. 5m);
// skipped without it. `make soak` runs it.
func TestSoak(t *testing.T) {
	s := os.Getenv("DRIFTD_SOAK")
	if s == "" {
		t.Skip("set DRIFTD_SOAK (e.g. 5m) to soak the daemon")
	}
	needBinary(t)
	span, err := time.ParseDuration(s)
	if err != nil || span <= 0 {
		t.Fatalf("DRIFTD_SOAK=%q: want a positive duration", s)
	}
	daemonSuite(t, span)
}

func daemonSuite(t *testing.T, span time.Duration) {
	every := max(sampleEvery, span/30) // about 30 samples in a soak
	dir := t.TempDir()
	writeFile(t, dir, "token", []byte(marker+"\n"))
	writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	var cfg strings.Builder
	cfg.WriteString("global: {schedule: \"@every 1s\", timeout: 2s, state_dir: state}\ntargets:\n")
	var names []string
	byName := map[string]behaviour{}
	for i, b := range behaviours() {
		if b.timeout > 0 {
			continue // a row about a longer deadline
		}
		name := fmt.Sprintf("b%02d", i)
		names = append(names, name)
		byName[name] = b
		t.Logf("target %s: %s", name, b.name)
		fmt.Fprintf(&cfg, "  - name: %s\n    url: %q\n    manifest: declared.json\n    http_client: {authorization: {type: Bearer, credentials_file: token}}\n", name, b.srv(t))
	}
	config := writeFile(t, dir, "driftd.yml", []byte(cfg.String()))

	addr := freeAddr(t)
	log := newCapped(64 << 20)
	cmd := exec.Command(binPath, "run", "--config.file", config, "--web.listen-address="+addr, "--log.format=json", "--log.level=debug")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
	}()
	base := "http://" + addr
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(get(base+"/-/ready").body, "OK") {
		if time.Now().After(deadline) {
			t.Fatalf("driftd not ready after 15 s:\n%.4000s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	time.Sleep(warmUp)
	var samples []sample
	for end := time.Now().Add(span); ; {
		s, err := scrapeSample(base)
		if err != nil {
			t.Fatalf("/metrics: %v", err)
		}
		samples = append(samples, s)
		t.Logf("sample %2d: %s", len(samples), s)
		if time.Now().After(end) {
			break
		}
		time.Sleep(every)
	}
	// Runs in flight make every sample swing (60 targets at @every 1s:
	// tens of goroutines and fds come and go between samples), so growth
	// compares floors: the least of the first half of the samples against
	// the least of the second half. A leak raises the floor run after run.
	half := len(samples) / 2
	first, last := floor(samples[:half]), floor(samples[half:])
	growth := func(what string, a, b, pct, abs float64, unit string) {
		t.Run("growth of "+what, func(t *testing.T) {
			bound := a*(1+pct/100) + abs
			msg := fmt.Sprintf("%s: floor %.0f%s in the first half, %.0f%s in the second (bound %.0f%s)", what, a, unit, b, unit, bound, unit)
			t.Log(msg)
			if b <= bound {
				return
			}
			if why := growthKnown[what]; why != "" {
				t.Skip("known failure: " + why + ": " + msg)
			}
			t.Error(msg)
		})
	}
	growth("goroutines", first.goroutines, last.goroutines, growthPct, growthAbs, "")
	growth("open fds", first.fds, last.fds, growthPct, growthAbs, "")
	growth("resident", first.rss/(1<<20), last.rss/(1<<20), rssGrowPct, rssGrowAbs>>20, " MiB")

	t.Run("runs end within deadline + 1 s", func(t *testing.T) {
		var targets []struct {
			Name    string `json:"name"`
			LastRun *struct {
				Success         bool    `json:"success"`
				FailureReason   string  `json:"failure_reason"`
				DurationSeconds float64 `json:"duration_seconds"`
			} `json:"last_run"`
		}
		if err := json.Unmarshal(apiData(get(base+"/api/v1/targets").body), &targets); err != nil {
			t.Fatal(err)
		}
		ran := 0
		for _, tg := range targets {
			if tg.LastRun == nil {
				t.Logf("%s: no run finished", tg.Name)
				continue
			}
			ran++
			if tg.LastRun.DurationSeconds > 3 {
				msg := fmt.Sprintf("%s: last run took %.2fs (reason %q)", tg.Name, tg.LastRun.DurationSeconds, tg.LastRun.FailureReason)
				if why := byName[tg.Name].daemonKnown; why != "" {
					t.Logf("known failure: %s: %s", why, msg)
				} else {
					t.Error(msg)
				}
			}
		}
		if ran < len(names)*9/10 {
			t.Errorf("only %d of %d targets finished a run", ran, len(names))
		}
	})

	// Every artifact: no marker, bounded size, no raw terminal controls.
	pages := []string{"/metrics", "/api/v1/targets", "/config", "/"}
	for _, n := range names {
		pages = append(pages, "/api/v1/targets/"+n, "/api/v1/targets/"+n+"/history", "/targets/"+n)
	}
	t.Run("endpoints", func(t *testing.T) {
		biggest, where := 0, ""
		for _, p := range pages {
			r := get(base + p)
			if r.err != nil {
				t.Errorf("%s: %v", p, r.err)
				continue
			}
			bound := maxPageBytes
			if strings.HasPrefix(p, "/api/v1/targets/") && !strings.HasSuffix(p, "/history") {
				bound = maxReportBytes
			}
			if len(r.body) > biggest {
				biggest, where = len(r.body), p
			}
			checkArtifact(t, p, r.body, bound)
		}
		t.Logf("%d endpoints scanned; largest %s, %d bytes", len(pages), where, biggest)
	})

	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
		t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(12 * time.Second):
		t.Errorf("driftd did not stop within 10 s of SIGTERM")
	}

	// State is data, not display: it keeps served names verbatim so the
	// next run can diff them, so only the marker and the size are checked.
	t.Run("state files", func(t *testing.T) {
		n, biggest := 0, int64(0)
		filepath.WalkDir(filepath.Join(dir, "state"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Error(err)
				return nil
			}
			n++
			biggest = max(biggest, int64(len(b)))
			rel, _ := filepath.Rel(dir, path)
			if i := strings.Index(string(b), marker); i >= 0 {
				t.Errorf("the marker secret is in %s", rel)
			}
			bound := maxStateFile
			if strings.Contains(filepath.ToSlash(rel), "snapshots/") {
				// A snapshot holds the served definitions as read: its
				// documented bound is what a run may read (docs/daemon.md).
				bound = maxRunBytes
			}
			if len(b) > bound {
				msg := fmt.Sprintf("%s is %d bytes, bound %d", rel, len(b), bound)
				if why := byName[strings.TrimSuffix(filepath.Base(path), ".json")].daemonKnown; why != "" {
					t.Logf("known failure: %s: %s", why, msg)
				} else {
					t.Error(msg)
				}
			}
			return nil
		})
		t.Logf("%d state files, largest %d bytes", n, biggest)
		if n == 0 {
			t.Error("no state written")
		}
	})
	t.Run("log", func(t *testing.T) {
		text := log.String()
		longest, lines := 0, 0
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			lines++
			longest = max(longest, len(sc.Bytes()))
		}
		t.Logf("log: %d bytes, %d lines, longest %d bytes", log.Total(), lines, longest)
		if longest > maxLogLine {
			t.Errorf("a log line is %d bytes, bound %d", longest, maxLogLine)
		}
		checkArtifact(t, "the log", text, int(log.Total())+1)
	})
}

// checkArtifact: no marker, at most bound bytes, no raw terminal control.
func checkArtifact(t *testing.T, what, body string, bound int) {
	t.Helper()
	if len(body) > bound {
		t.Errorf("%s is %d bytes, bound %d", what, len(body), bound)
	}
	if i := strings.Index(body, marker); i >= 0 {
		t.Errorf("the marker secret is in %s: …%q…", what, body[max(0, i-80):min(len(body), i+len(marker)+20)])
	}
	if bad := unsafeText(body); bad != "" {
		t.Errorf("%s carries a raw %s", what, bad)
	}
}

type sample struct{ goroutines, fds, rss float64 }

func (s sample) String() string {
	return fmt.Sprintf("goroutines %.0f, open fds %.0f, resident %.0f MiB", s.goroutines, s.fds, s.rss/(1<<20))
}

var metricLine = regexp.MustCompile(`(?m)^(go_goroutines|process_open_fds|process_resident_memory_bytes) (\S+)$`)

func scrapeSample(base string) (sample, error) {
	r := get(base + "/metrics")
	if r.err != nil {
		return sample{}, r.err
	}
	var s sample
	found := 0
	for _, m := range metricLine.FindAllStringSubmatch(r.body, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return s, err
		}
		found++
		switch m[1] {
		case "go_goroutines":
			s.goroutines = v
		case "process_open_fds":
			s.fds = v
		case "process_resident_memory_bytes":
			s.rss = v
		}
	}
	if found != 3 {
		return s, fmt.Errorf("found %d of the 3 sampled metrics", found)
	}
	return s, nil
}

type got struct {
	body string
	err  error
}

// apiData is the data of an /api/v1 answer ({"status": "success",
// "data": …}, docs/daemon.md#api); an answer that is not one reads as
// null.
func apiData(body string) []byte {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal([]byte(body), &env) != nil || env.Data == nil {
		return []byte("null")
	}
	return env.Data
}

// get fetches url with a 10 s limit, reading at most 16 MiB.
func get(url string) got {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return got{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return got{body: string(b), err: err}
}

// freeAddr is a loopback address nothing listens on (a race with other
// processes is possible but unlikely).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// floor is the least of each measure over samples.
func floor(samples []sample) sample {
	f := samples[0]
	for _, s := range samples[1:] {
		f.goroutines, f.fds, f.rss = min(f.goroutines, s.goroutines), min(f.fds, s.fds), min(f.rss, s.rss)
	}
	return f
}
