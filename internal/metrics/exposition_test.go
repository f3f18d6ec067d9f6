package metrics

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// openMetrics is the Accept header Prometheus sends, which prefers
// OpenMetrics 1.0.
const openMetrics = "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

// decode reads an exposition in the format its content type names with
// prometheus/common's decoder (the OpenMetrics parser for OpenMetrics).
func decode(t *testing.T, b []byte, contentType string) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(b), expfmt.Format(contentType))
	out := map[string]*dto.MetricFamily{}
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", contentType, err, b)
		}
		if _, dup := out[mf.GetName()]; dup {
			t.Fatalf("family %s split in two", mf.GetName())
		}
		out[mf.GetName()] = mf
	}
}

// registryCreated matches the _created samples of series that
// client_golang owns (no target label); their values are the clock's
// when the test ran.
var registryCreated = regexp.MustCompile(`(?m)^(\w+_created(?:\{[^}]*\})?) \S+$`)

func TestOpenMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := scenario(reg, Options{})
	body, ct := scrape(t, m.Handler(reg), openMetrics)
	if !strings.HasPrefix(ct, "application/openmetrics-text; version=1.0.0") {
		t.Fatalf("Content-Type %q, want OpenMetrics 1.0.0", ct)
	}
	if !bytes.HasSuffix(body, []byte("\n# EOF\n")) {
		t.Fatal("OpenMetrics without # EOF at its end")
	}
	created := fmt.Sprint(unixSeconds(clock))
	for _, must := range []string{
		"# TYPE driftd_probes counter\n",
		`driftd_probes_total{result="success",target="orders"} 1` + "\n" + `driftd_probes_created{result="success",target="orders"} ` + created + "\n",
		`driftd_probe_failures_total{reason="timeout",target="search"} 1` + "\n" + `driftd_probe_failures_created{reason="timeout",target="search"} ` + created + "\n",
		`driftd_findings_opened_created{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="orders"} ` + created + "\n",
		"driftd_mcp_requests_created{",
		"driftd_probe_duration_seconds_created ",
	} {
		if !bytes.Contains(body, []byte(must)) {
			t.Errorf("OpenMetrics lacks %q", must)
		}
	}
	fams := decode(t, body, ct)
	for _, name := range []string{"driftd_probes_total", "driftd_probe_failures_total", "driftd_probe_skipped_total", "driftd_findings_opened_total", "driftd_served_changes_total"} {
		mf := fams[name]
		if mf.GetType() != dto.MetricType_COUNTER || len(mf.GetMetric()) == 0 {
			t.Fatalf("%s: %v, want a counter family", name, mf)
		}
		for _, s := range mf.GetMetric() {
			if ct := s.GetCounter().GetCreatedTimestamp(); ct == nil || !ct.AsTime().Equal(clock) {
				t.Errorf("%s %v: created %v, want %v", name, s.GetLabel(), ct.AsTime(), clock)
			}
		}
	}
	// The golden file has the _created samples of client_golang's own
	// series as a placeholder; the targets' are the test's clock.
	got := registryCreated.ReplaceAllFunc(body, func(line []byte) []byte {
		if bytes.Contains(line, []byte(`target="`)) {
			return line
		}
		return registryCreated.ReplaceAll(line, []byte("$1 <created>"))
	})
	golden(t, "testdata/scenario.om", got)
}

// golden compares got with a golden file, or writes it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/metrics -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("exposition differs from %s (go test ./internal/metrics -update):\n%s", path, got)
	}
}

// TestNegotiation: the format follows the Accept header, the text format
// when it names none /metrics speaks; gzip follows Accept-Encoding.
func TestNegotiation(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	h := scenario(reg, Options{}).Handler(reg)
	for _, tc := range []struct {
		accept, encoding, wantType string
		gzip                       bool
	}{
		{"", "", "text/plain; version=0.0.4", false},
		{"application/json", "", "text/plain; version=0.0.4", false},
		{"text/plain;version=0.0.4", "gzip", "text/plain; version=0.0.4", true},
		{openMetrics, "gzip, deflate", "application/openmetrics-text; version=1.0.0", true},
		{"application/openmetrics-text;version=0.0.1", "", "application/openmetrics-text; version=0.0.1", false},
		{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "", "text/plain; version=0.0.4", false},
		{"", "gzip;q=0, *", "text/plain; version=0.0.4", false},
		{"", "br, *;q=0.1", "text/plain; version=0.0.4", true},
	} {
		t.Run(tc.accept+"|"+tc.encoding, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/metrics", nil)
			req.Header.Set("Accept", tc.accept)
			req.Header.Set("Accept-Encoding", tc.encoding)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			ct := rec.Header().Get("Content-Type")
			if !strings.HasPrefix(ct, tc.wantType) {
				t.Fatalf("Content-Type %q, want %q", ct, tc.wantType)
			}
			body := rec.Body.Bytes()
			if gz := rec.Header().Get("Content-Encoding") == "gzip"; gz != tc.gzip {
				t.Fatalf("gzip %v, want %v", gz, tc.gzip)
			} else if gz {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if strings.HasPrefix(ct, "text/plain") {
				parse(t, body)
			} else if !bytes.HasSuffix(body, []byte("\n# EOF\n")) {
				t.Fatal("OpenMetrics without # EOF at its end")
			}
		})
	}
}

// TestPromtoolCheckMetrics lints both formats with promtool (Debian's
// prometheus package; CI installs it). promtool check metrics reads the
// text format only: in OpenMetrics it takes a counter's _total and
// _created samples for families of their own without help, which is all
// it may say of it — for client_golang's own counters too.
func TestPromtoolCheckMetrics(t *testing.T) {
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not installed in CI")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	reg := prometheus.NewPedanticRegistry()
	h := scenario(reg, Options{}).Handler(reg)
	for _, accept := range []string{"", openMetrics} {
		body, ct := scrape(t, h, accept)
		t.Run(ct, func(t *testing.T) {
			cmd := exec.Command(path, "check", "metrics")
			cmd.Stdin = bytes.NewReader(body)
			out, err := cmd.CombinedOutput()
			if err == nil {
				return
			}
			if !strings.HasPrefix(ct, "application/openmetrics-text") {
				t.Fatalf("promtool check metrics: %v\n%s", err, out)
			}
			problems := bufio.NewScanner(bytes.NewReader(out))
			for problems.Scan() {
				name, what, _ := strings.Cut(problems.Text(), " ")
				family := strings.TrimSuffix(strings.TrimSuffix(name, "_total"), "_created")
				if what != "no help text" || family == name || !bytes.Contains(body, []byte("# HELP "+family+" ")) {
					t.Errorf("promtool check metrics: %s", problems.Text())
				}
			}
		})
	}
}

// TestCountersStartAtZero: a scheduled target has driftd_probes_total at
// 0, both results, before its first run, created when it was scheduled,
// so its first failure is an increase from 0. The counters a healthy
// target never counts — a failure's reason, a skipped run — are created
// at their first event, with that time as _created, at 1.
func TestCountersStartAtZero(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, BuildInfo{Version: "1"}, Options{PerTargetHistograms: true})
	m.now = func() time.Time { return clock }
	m.SetTargets([]Target{{Name: "new", SeriesLimit: 10}})
	body, ct := scrape(t, m.Handler(reg), openMetrics)
	fams := decode(t, body, ct)
	want := map[string]int{"driftd_probes_total": 2, "driftd_probe_failures_total": 0, "driftd_probe_skipped_total": 0}
	for name, n := range want {
		ms := fams[name].GetMetric()
		if len(ms) != n {
			t.Errorf("%s: %d series, want %d", name, len(ms), n)
		}
		for _, s := range ms {
			if v := s.GetCounter().GetValue(); v != 0 || !s.GetCounter().GetCreatedTimestamp().AsTime().Equal(clock) {
				t.Errorf("%s %v: %v created %v, want 0 created %v", name, s.GetLabel(), v, s.GetCounter().GetCreatedTimestamp().AsTime(), clock)
			}
		}
	}
	if h := fams["driftd_probe_duration_seconds"].GetMetric(); len(h) != 1 || h[0].GetHistogram().GetSampleCount() != 0 {
		t.Errorf("per-target histogram %v, want one, empty", h)
	}
	later := clock.Add(time.Minute)
	m.now = func() time.Time { return later }
	m.Observe(observed(fixedReport("new", false)))
	m.Skipped("new")
	m.Observe(observed(fixedReport("new", true, catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "a"})))
	body, ct = scrape(t, m.Handler(reg), openMetrics)
	fams = decode(t, body, ct)
	for name, reason := range map[string]string{"driftd_probe_failures_total": string(mcp.ReasonTimeout), "driftd_probe_skipped_total": ""} {
		ms := fams[name].GetMetric()
		if len(ms) != 1 {
			t.Fatalf("%s: %d series after one event, want 1", name, len(ms))
		}
		c := ms[0].GetCounter()
		if c.GetValue() != 1 || !c.GetCreatedTimestamp().AsTime().Equal(later) {
			t.Errorf("%s %v: %v created %v, want 1 created at its first event %v", name, ms[0].GetLabel(), c.GetValue(), c.GetCreatedTimestamp().AsTime(), later)
		}
		if reason != "" && ms[0].GetLabel()[0].GetValue() != reason {
			t.Errorf("%s: labels %v, want reason %s", name, ms[0].GetLabel(), reason)
		}
	}
	for _, s := range fams["driftd_probes_total"].GetMetric() {
		if c := s.GetCounter(); c.GetValue() != 1 || !c.GetCreatedTimestamp().AsTime().Equal(clock) {
			t.Errorf("driftd_probes_total %v: %v created %v, want 1 created %v", s.GetLabel(), c.GetValue(), c.GetCreatedTimestamp().AsTime(), clock)
		}
	}
	opened := fams["driftd_findings_opened_total"].GetMetric()
	if len(opened) != 1 || !opened[0].GetCounter().GetCreatedTimestamp().AsTime().Equal(later) {
		t.Errorf("driftd_findings_opened_total %v, want one created at its first opening %v", opened, later)
	}
}

// TestRemovedTargetLosesEverySeries: removing a target, by reconciling
// or by Remove, deletes all its series, counters and per-target
// histogram included, in both formats.
func TestRemovedTargetLosesEverySeries(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := scenario(reg, Options{PerTargetHistograms: true})
	m.SetTargets([]Target{{Name: "search", SeriesLimit: 200}})
	for _, accept := range []string{"", openMetrics} {
		if body, ct := scrape(t, m.Handler(reg), accept); bytes.Contains(body, []byte(`target="orders"`)) {
			t.Fatalf("%s: a removed target still has series", ct)
		}
	}
	m.Remove("search")
	for _, accept := range []string{"", openMetrics} {
		body, ct := scrape(t, m.Handler(reg), accept)
		if bytes.Contains(body, []byte(`target="`)) {
			t.Fatalf("%s: Remove left series:\n%s", ct, body)
		}
		if !bytes.Contains(body, []byte("driftd_targets 0")) {
			t.Fatalf("%s: driftd_targets not updated", ct)
		}
	}
	m.SetTargets([]Target{{Name: "orders", SeriesLimit: 200}})
	if body := exposition(t, m, reg); !bytes.Contains(body, []byte(`driftd_probes_total{result="success",target="orders"} 0`)) {
		t.Fatal("a target added back does not start from 0")
	}
}

// TestConcurrentScrapes: scrapes in both formats, gzipped or not, while
// runs are published and targets come and go, each get a whole
// exposition (run with -race). The text bodies are parsed; the
// OpenMetrics ones, whose parser is slow (TestOpenMetrics runs it), are
// checked for their end and their families' headers.
func TestConcurrentScrapes(t *testing.T) {
	m, reg := newPlain()
	var ts []Target
	for i := range 100 {
		ts = append(ts, Target{Name: fmt.Sprintf("t%03d", i), SeriesLimit: 10})
	}
	observeEach(m, ts)
	h := m.Handler(reg)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 400 {
			tg := ts[i%len(ts)]
			m.Observe(observed(fixedReport(tg.Name, i%3 != 0, catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: fmt.Sprint(i)})))
			m.Skipped(tg.Name)
			m.SetInterval(tg.Name, time.Duration(i%5+1)*time.Minute)
			if i%50 == 0 {
				m.SetTargets(ts[:len(ts)-i%7])
			}
		}
	})
	bodies := make(chan [2]string, 16)
	for i := range 16 {
		wg.Go(func() {
			req := httptest.NewRequest("GET", "/metrics", nil)
			if i%2 == 0 {
				req.Header.Set("Accept", openMetrics)
			}
			if i%4 < 2 {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			b := rec.Body.Bytes()
			if rec.Header().Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Error(err)
					return
				}
				if b, err = io.ReadAll(zr); err != nil {
					t.Error(err)
					return
				}
			}
			bodies <- [2]string{rec.Header().Get("Content-Type"), string(b)}
		})
	}
	wg.Wait()
	close(bodies)
	for b := range bodies {
		ct, body := b[0], []byte(b[1])
		if !strings.HasPrefix(ct, "application/openmetrics-text") {
			parse(t, body)
			continue
		}
		if !bytes.HasSuffix(body, []byte("\n# EOF\n")) || bytes.Count(body, []byte("# TYPE ")) < 20 {
			t.Errorf("a cut OpenMetrics exposition:\n%s", body)
		}
	}
}

// TestTextParses: the text format parses with the Prometheus text parser,
// which rejects a family split in two, a malformed line or a duplicate
// series.
func TestTextParses(t *testing.T) {
	m, reg := fleet(300)
	body, _ := scrape(t, m.Handler(reg), "")
	parse(t, body)
	if bytes.Contains(body, []byte("_created")) {
		t.Fatal("_created samples in the text format")
	}
}

// TestEscaping: a tool name and a configured label value with a quote, a
// backslash, a space and a brace come back whole from both formats.
func TestEscaping(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, BuildInfo{Version: "1"}, Options{})
	m.now = func() time.Time { return clock }
	const tool, team = `say "hi"} \ now`, `a "b"\c}`
	m.SetTargets([]Target{{Name: "odd", Labels: map[string]string{"team": team}, SeriesLimit: 10}})
	m.Observe(observed(fixedReport("odd", true, catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: tool})))
	for _, accept := range []string{"", openMetrics} {
		body, ct := scrape(t, m.Handler(reg), accept)
		fams := decode(t, body, ct)
		got := map[string]string{}
		for _, name := range []string{"driftd_finding", "driftd_target_info"} {
			for _, l := range fams[name].GetMetric()[0].GetLabel() {
				got[name+"/"+l.GetName()] = l.GetValue()
			}
		}
		if got["driftd_finding/tool"] != tool || got["driftd_target_info/team"] != team {
			t.Errorf("%s: tool %q, team %q; want %q, %q", ct, got["driftd_finding/tool"], got["driftd_target_info/team"], tool, team)
		}
		// The target's first run: its finding is initial, its counter created at 0.
		if c := fams["driftd_findings_opened_total"].GetMetric(); len(c) != 1 || c[0].GetCounter().GetValue() != 0 {
			t.Errorf("%s: driftd_findings_opened_total %v", ct, c)
		}
	}
}

// TestTargetInfoFollowsTheLabels: when a reconcile brings a configured
// label no target had, every target's driftd_target_info gets it, and
// loses it when the last target with it goes.
func TestTargetInfoFollowsTheLabels(t *testing.T) {
	m, reg := newPlain()
	observeEach(m, []Target{{Name: "a", SeriesLimit: 10}})
	m.SetTargets([]Target{{Name: "a", SeriesLimit: 10}, {Name: "b", Labels: map[string]string{"env": "prod"}, SeriesLimit: 10}})
	if body := exposition(t, m, reg); !bytes.Contains(body, []byte(`driftd_target_info{classification="production",env="",protocol_revision`)) {
		t.Fatalf("a target's driftd_target_info lacks a label another target brought:\n%s", body)
	}
	m.Remove("b")
	if body := exposition(t, m, reg); bytes.Contains(body, []byte(`env=`)) {
		t.Fatalf("a label no target has any more is still on driftd_target_info:\n%s", body)
	}
}
