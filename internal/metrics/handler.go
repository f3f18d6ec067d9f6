package metrics

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// acceptedFormats are the formats /metrics negotiates, in the order it
// prefers them: OpenMetrics 1.0 (0.0.1, its older name), then the text
// format 0.0.4, which is also the answer when the Accept header names
// none of them.
var acceptedFormats = []expfmt.Format{expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtOpenMetrics_0_0_1, expfmt.FmtText}

var gzipWriters = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}

// Handler serves /metrics: g's families (driftd's own series, and what
// else the caller registered in g, such as the Go and process
// collectors) through client_golang's encoder, then the per-target
// families, each target's lines as they were rendered when they last
// changed. The format is negotiated from the Accept header by
// prometheus/common's expfmt, as promhttp does; in OpenMetrics every
// counter and histogram has its _created sample. gzip when the client
// accepts it. A Gather error is answered 500, as promhttp's default does.
func (m *Metrics) Handler(g prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mfs, err := g.Gather()
		if err != nil {
			http.Error(w, "error gathering metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		format := expfmt.NegotiateAccept(r.Header, acceptedFormats...)
		h := w.Header()
		h.Set("Content-Type", string(format))
		h.Add("Vary", "Accept")
		h.Add("Vary", "Accept-Encoding")
		var out io.Writer = w
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			gz := gzipWriters.Get().(*gzip.Writer)
			gz.Reset(w)
			defer func() { _ = gz.Close(); gzipWriters.Put(gz) }()
			out = gz
		}
		bw := bufio.NewWriterSize(out, 64<<10)
		defer bw.Flush()
		enc := expfmt.NewEncoder(bw, format, expfmt.WithCreatedLines())
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				return // the status is sent; the client sees a cut body
			}
		}
		m.writeTargets(bw, format.FormatType() == expfmt.TypeOpenMetrics)
		if c, ok := enc.(expfmt.Closer); ok {
			_ = c.Close() // OpenMetrics' "# EOF"
		}
	})
}

// writeTargets writes the per-target families, each family's lines
// together, targets in name order. The targets' rendered lines are
// taken under the read lock and written after it: they are never
// changed, only replaced, so a slow client holds up no run.
func (m *Metrics) writeTargets(w *bufio.Writer, openMetrics bool) {
	m.mu.RLock()
	rs := make([]*rendered, len(m.names))
	for i, name := range m.names {
		rs[i] = m.targets[name].out
	}
	m.mu.RUnlock()
	for f, fam := range families {
		header := false
		counter := fam.typ == "counter"
		for _, r := range rs {
			b := r.family(f)
			if len(b) == 0 {
				continue
			}
			if !header {
				writeHeader(w, fam, openMetrics)
				header = true
			}
			if !counter {
				_, _ = w.Write(b)
				continue
			}
			writeCounters(w, b, openMetrics)
		}
	}
}

// writeHeader writes a family's HELP and TYPE. OpenMetrics names a
// counter family without its samples' _total suffix.
func writeHeader(w *bufio.Writer, fam family, openMetrics bool) {
	name := fam.name
	if openMetrics {
		name = strings.TrimSuffix(name, "_total")
	}
	var b []byte
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, fam.help, openMetrics)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, fam.typ...)
	b = append(b, '\n')
	_, _ = w.Write(b)
}

// writeCounters writes a counter family's rendered lines: each sample,
// and in OpenMetrics its _created sample, named after the family, with
// the sample's labels and the creation time rendered after createdMark.
func writeCounters(w *bufio.Writer, b []byte, openMetrics bool) {
	for len(b) > 0 {
		n := bytes.IndexByte(b, '\n')
		line := b[:n]
		b = b[n+1:]
		mark := bytes.IndexByte(line, createdMark)
		_, _ = w.Write(line[:mark])
		_ = w.WriteByte('\n')
		if !openMetrics {
			continue
		}
		brace := bytes.IndexByte(line, '{')
		value := bytes.LastIndexByte(line[:mark], ' ') // a label value may hold a space; the value does not
		_, _ = w.Write(bytes.TrimSuffix(line[:brace], []byte("_total")))
		_, _ = w.WriteString("_created")
		_, _ = w.Write(line[brace : value+1])
		_, _ = w.Write(line[mark+1:])
		_ = w.WriteByte('\n')
	}
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip:
// it names gzip, or else *, with a q-value other than 0 (RFC 9110
// §12.5.3). promhttp negotiates the same way, in a package of its own
// that is not exported.
func acceptsGzip(header string) bool {
	gzipQ, starQ := -1.0, -1.0
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		q := 1.0
		if k, v, ok := strings.Cut(params, "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				q = f
			}
		}
		switch coding = strings.TrimSpace(coding); {
		case strings.EqualFold(coding, "gzip"):
			gzipQ = q
		case coding == "*":
			starQ = q
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}
