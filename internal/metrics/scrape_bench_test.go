package metrics

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// fleet is a Metrics of n targets as a fleet of distinct servers leaves
// it (DESIGN §14): each target has run once; nine in ten succeeded with a
// few findings (a missing and an undeclared tool named as benchgen names
// them, a schema drift, the missing serverInfo and the anonymous
// listing), which the first run opened; one in ten failed. The registry
// has the Go and process collectors, as the daemon's has.
func fleet(n int) (*Metrics, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := New(reg, BuildInfo{Version: "1", Revision: "r", GoVersion: "go"}, Options{})
	ts := make([]Target, n)
	for i := range ts {
		ts[i] = Target{Name: fmt.Sprintf("server-%05d", i), Labels: map[string]string{"team": fmt.Sprintf("team-%02d", i%40)}, SeriesLimit: 200}
	}
	m.SetTargets(ts)
	for i, t := range ts {
		m.SetInterval(t.Name, time.Minute)
		if i%10 == 9 {
			m.Observe(observed(fixedReport(t.Name, false)))
			continue
		}
		m.Observe(observed(fixedReport(t.Name, true,
			catalogue.Finding{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: benchgen.Name(i)},
			catalogue.Finding{Rule: catalogue.DriftToolUndeclared, Severity: catalogue.Warn, Tool: benchgen.Name(i + 1)},
			catalogue.Finding{Rule: catalogue.DriftSchema, Severity: catalogue.Error, Tool: benchgen.Name(i + 2), Pointer: "/properties/limit"},
			catalogue.Finding{Rule: catalogue.ConfServerInfo, Severity: catalogue.Info},
			catalogue.Finding{Rule: catalogue.AuthAnonymousList, Severity: catalogue.Error})))
	}
	for range 3 {
		m.Exchange(&mcp.Exchange{Method: "tools/list", Duration: 3 * time.Millisecond})
	}
	return m, reg
}

// BenchmarkScrape10k is one /metrics scrape of 10,000 targets through the
// handler, in the text format and in OpenMetrics, plain and gzipped
// (DESIGN §14: ≤ 300 ms). Run it with
//
//	go test ./internal/metrics -run '^$' -bench Scrape10k -benchtime 5x
func BenchmarkScrape10k(b *testing.B) {
	m, reg := fleet(10_000)
	h := m.Handler(reg)
	for _, format := range []struct{ name, accept string }{
		{"text", ""},
		{"openmetrics", "application/openmetrics-text;version=1.0.0"},
	} {
		for _, gz := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/gzip=%v", format.name, gz), func(b *testing.B) {
				var size int64
				series := 0
				for b.Loop() {
					req := httptest.NewRequest("GET", "/metrics", nil)
					if format.accept != "" {
						req.Header.Set("Accept", format.accept)
					}
					if gz {
						req.Header.Set("Accept-Encoding", "gzip")
					}
					w := &countingWriter{header: http.Header{}}
					h.ServeHTTP(w, req)
					size, series = w.n, w.lines
				}
				b.ReportMetric(float64(size), "bytes")
				if !gz {
					b.ReportMetric(float64(series), "lines")
				}
			})
		}
	}
}

// countingWriter is a ResponseWriter that counts what it is sent, as a
// client reading the socket would, without keeping it.
type countingWriter struct {
	header http.Header
	n      int64
	lines  int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(int)     {}
func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	for _, c := range p {
		if c == '\n' {
			w.lines++
		}
	}
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)
