package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape is one GET /metrics: the parsed families and what it cost.
type scrape struct {
	families map[string]*dto.MetricFamily
	took     time.Duration // request sent to body fully read
	size     int
}

// getMetrics scrapes url (text exposition), reading the whole body into
// buf. A caller timing scrapes passes the same buf each time, as
// Prometheus reads into buffers it keeps: a body read into fresh memory
// that doubles as it grows measured this harness's page faults and
// copies (some 30 MB for a 10.5 MB body), not the daemon.
func getMetrics(ctx context.Context, url string, buf *bytes.Buffer) (*scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	start := time.Now()
	resp, err := control.Do(req)
	if err != nil {
		return nil, err
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return parseMetrics(buf.Bytes(), took)
}

func parseMetrics(b []byte, took time.Duration) (*scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	return &scrape{families: fams, took: took, size: len(b)}, nil
}

// series counts the exposition's time series: a sample line each, so a
// histogram counts its buckets, sum and count.
func (s *scrape) series() int {
	n := 0
	for _, f := range s.families {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetHistogram() != nil:
				n += len(withInf(m.GetHistogram())) + 2
			case m.GetSummary() != nil:
				n += len(m.GetSummary().GetQuantile()) + 2
			default:
				n++
			}
		}
	}
	return n
}

// byLabel sums a counter or gauge family's values per value of label,
// over the series whose labels include match.
func (s *scrape) byLabel(name, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	f := s.families[name]
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for k, v := range match {
			ok = ok && labels[k] == v
		}
		if !ok {
			continue
		}
		v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
		out[labels[label]] += v
	}
	return out
}

// sum is a family's total over the series whose labels include match.
func (s *scrape) sum(name string, match map[string]string) float64 {
	t := 0.0
	for _, v := range s.byLabel(name, "", match) {
		t += v
	}
	return t
}

// bucket is one cumulative histogram bucket.
type bucket struct {
	le    float64
	count float64
}

// histogram returns the buckets of an unlabelled histogram, summed over
// its series, or false if the family is absent.
func (s *scrape) histogram(name string) ([]bucket, bool) {
	f, ok := s.families[name]
	if !ok || f.GetType() != dto.MetricType_HISTOGRAM {
		return nil, false
	}
	sums := map[float64]float64{}
	for _, m := range f.GetMetric() {
		for _, b := range withInf(m.GetHistogram()) {
			sums[b.le] += b.count
		}
	}
	var out []bucket
	for le, c := range sums {
		out = append(out, bucket{le, c})
	}
	slices.SortFunc(out, func(a, b bucket) int { return compareFloat(a.le, b.le) })
	return out, true
}

// withInf is a histogram's buckets with the +Inf bucket (the sample
// count) present exactly once.
func withInf(h *dto.Histogram) []bucket {
	var out []bucket
	for _, b := range h.GetBucket() {
		out = append(out, bucket{b.GetUpperBound(), float64(b.GetCumulativeCount())})
	}
	if len(out) == 0 || !math.IsInf(out[len(out)-1].le, 1) {
		out = append(out, bucket{math.Inf(1), float64(h.GetSampleCount())})
	}
	return out
}

// deltaBuckets is later − earlier, bucket by bucket: the observations
// made between two scrapes (what rate() would see).
func deltaBuckets(later, earlier []bucket) []bucket {
	return combineBuckets(later, earlier, -1)
}

// addBuckets adds two histograms of the same bounds: several replicas'
// observations as one.
func addBuckets(a, b []bucket) []bucket { return combineBuckets(a, b, 1) }

// combineBuckets is a + sign·b, bucket by bucket, on a's bounds (a bound
// b lacks counts 0).
func combineBuckets(a, b []bucket, sign float64) []bucket {
	bs := make(map[float64]float64, len(b))
	for _, x := range b {
		bs[x.le] = x.count
	}
	out := make([]bucket, len(a))
	for i, x := range a {
		out[i] = bucket{x.le, x.count + sign*bs[x.le]}
	}
	return out
}

// quantile is Prometheus's histogram_quantile over cumulative buckets
// sorted by upper bound, the last being +Inf: linear interpolation inside
// the bucket holding the rank; a rank in the +Inf bucket gives the highest
// finite bound. NaN without observations.
func quantile(q float64, bs []bucket) float64 {
	if len(bs) == 0 || bs[len(bs)-1].count == 0 {
		return math.NaN()
	}
	rank := q * bs[len(bs)-1].count
	i, _ := slices.BinarySearchFunc(bs, rank, func(b bucket, r float64) int { return compareFloat(b.count, r) })
	if i >= len(bs)-1 {
		if len(bs) < 2 {
			return math.NaN()
		}
		return bs[len(bs)-2].le
	}
	start, below := 0.0, 0.0
	if i > 0 {
		start, below = bs[i-1].le, bs[i-1].count
	} else if bs[0].le < 0 {
		return bs[0].le
	}
	in := bs[i].count - below
	if in == 0 {
		return bs[i].le
	}
	return start + (bs[i].le-start)*(rank-below)/in
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
