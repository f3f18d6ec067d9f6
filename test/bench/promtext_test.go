package main

import (
	"math"
	"testing"
)

const exposition = `# HELP driftd_probes_total Probes.
# TYPE driftd_probes_total counter
driftd_probes_total{result="success",target="a"} 3
driftd_probes_total{result="failure",target="a"} 1
driftd_probes_total{result="success",target="b"} 5
# HELP driftd_scheduler_start_lateness_seconds Lateness.
# TYPE driftd_scheduler_start_lateness_seconds histogram
driftd_scheduler_start_lateness_seconds_bucket{le="0.1"} 50
driftd_scheduler_start_lateness_seconds_bucket{le="1"} 90
driftd_scheduler_start_lateness_seconds_bucket{le="+Inf"} 100
driftd_scheduler_start_lateness_seconds_sum 42
driftd_scheduler_start_lateness_seconds_count 100
`

func TestScrapeSums(t *testing.T) {
	s, err := parseMetrics([]byte(exposition), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.sum("driftd_probes_total", nil); got != 9 {
		t.Errorf("sum = %v, want 9", got)
	}
	if got := s.sum("driftd_probes_total", map[string]string{"result": "failure"}); got != 1 {
		t.Errorf("failures = %v, want 1", got)
	}
	if got := s.byLabel("driftd_probes_total", "target", nil); got["a"] != 4 || got["b"] != 5 {
		t.Errorf("by target = %v", got)
	}
	if got := s.series(); got != 3+3+2 {
		t.Errorf("series = %d, want 8", got)
	}
	bs, ok := s.histogram("driftd_scheduler_start_lateness_seconds")
	if !ok || len(bs) != 3 || !math.IsInf(bs[2].le, 1) || bs[2].count != 100 {
		t.Fatalf("histogram = %v, %v", bs, ok)
	}
	if _, ok := s.histogram("absent"); ok {
		t.Error("absent histogram found")
	}
}

// The expected values are what histogram_quantile returns for the same
// buckets.
func TestQuantile(t *testing.T) {
	bs := []bucket{{0.1, 50}, {1, 90}, {math.Inf(1), 100}}
	for _, tc := range []struct{ q, want float64 }{
		{0.5, 0.1},   // rank 50: the top of the first bucket
		{0.25, 0.05}, // halfway into [0, 0.1]
		{0.7, 0.55},  // rank 70: halfway into (0.1, 1]
		{0.99, 1},    // rank 99: in +Inf, so the highest finite bound
	} {
		if got := quantile(tc.q, bs); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(0.99, []bucket{{1, 0}, {math.Inf(1), 0}}); !math.IsNaN(got) {
		t.Errorf("no observations: %v, want NaN", got)
	}
}

func TestDeltaBuckets(t *testing.T) {
	later := []bucket{{0.1, 60}, {1, 95}, {math.Inf(1), 110}}
	earlier := []bucket{{0.1, 50}, {1, 90}, {math.Inf(1), 100}}
	got := deltaBuckets(later, earlier)
	want := []bucket{{0.1, 10}, {1, 5}, {math.Inf(1), 10}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delta = %v, want %v", got, want)
		}
	}
}
