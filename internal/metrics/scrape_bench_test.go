package metrics

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
)

// BenchmarkScrape10k is one /metrics scrape of 10,000 targets, each with
// one active finding (DESIGN §14: ≤ 300 ms).
func BenchmarkScrape10k(b *testing.B) {
	m, reg := newPlain()
	const n = 10_000
	ts := make([]Target, n)
	for i := range ts {
		ts[i] = Target{Name: fmt.Sprintf("target-%05d", i), SeriesLimit: 200}
	}
	m.SetTargets(ts)
	for _, t := range ts {
		m.SetInterval(t.Name, time.Minute)
		rep := fixedReport(t.Name, true, catalogue.Finding{Rule: catalogue.AuthAnonymousList, Severity: catalogue.Info})
		m.Observe(observed(rep))
	}
	h := m.Handler(reg)
	for _, gz := range []bool{false, true} {
		b.Run(fmt.Sprintf("gzip=%v", gz), func(b *testing.B) {
			var size int
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "/metrics", nil)
				if gz {
					req.Header.Set("Accept-Encoding", "gzip")
				}
				h.ServeHTTP(rec, req)
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}
