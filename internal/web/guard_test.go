package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/driftd/driftd/internal/probe"
)

// TestCrossSiteWritesRefused: the reproduction of issue 35 #4 — a page on
// another site submits a text/plain form to the accept endpoint — and its
// kin on every state-changing route are refused with 403 and change
// nothing; the same requests from driftd's own pages (same-origin, the
// header set) and from a non-browser client with the header pass.
func TestCrossSiteWritesRefused(t *testing.T) {
	src := &fakeSource{ready: true}
	srv := serve(t, true, src)
	routes := []string{"/-/reload", "/api/v1/targets/orders/probe", "/api/v1/targets/tofu/baseline"}
	send := func(path string, hdr map[string]string, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{
		// What a browser sends for <form enctype="text/plain"
		// action="http://driftd/…"> on https://evil.example.
		{"cross-site form", map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}},
		{"same-site, other origin", map[string]string{"Content-Type": "text/plain", "Sec-Fetch-Site": "same-site", RequestHeader: "1"}},
		{"old browser, foreign Origin", map[string]string{"Origin": "https://evil.example", RequestHeader: "1"}},
		{"opaque Origin", map[string]string{"Origin": "null", RequestHeader: "1"}},
		{"no header", map[string]string{"Content-Type": "text/plain"}},
		{"no header, JSON", map[string]string{"Content-Type": "application/json"}},
	} {
		for _, path := range routes {
			code, body := send(path, tc.hdr, `{"by":"mallory","reason":"x"}`)
			if code != http.StatusForbidden || !strings.Contains(body, "docs/security.md") {
				t.Errorf("%s to %s: %d %q, want 403", tc.name, path, code, body)
			}
		}
	}
	if src.reloaded != 0 || len(src.probed) != 0 || len(src.accepted) != 0 {
		t.Fatalf("a refused request changed something: reloaded %d, probed %v, accepted %v", src.reloaded, src.probed, src.accepted)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{
		{"the pages' fetch", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + host, RequestHeader: "1"}},
		{"old browser, same origin", map[string]string{"Origin": "http://" + host, RequestHeader: "1"}},
		{"curl or the CLI", map[string]string{RequestHeader: "1", "Content-Type": "application/json"}},
	} {
		for _, path := range routes {
			if code, body := send(path, tc.hdr, `{"digest":"`+tofuDigest+`","reason":"reviewed"}`); code >= 300 {
				t.Errorf("%s to %s: %d %q", tc.name, path, code, body)
			}
		}
	}
	if src.reloaded != 3 || len(src.probed) != 3 || len(src.accepted) != 3 {
		t.Fatalf("allowed requests: reloaded %d, probed %v, accepted %v", src.reloaded, src.probed, src.accepted)
	}
	// A body past the bound is cut by the gate, whatever the handler.
	big := strings.Repeat("x", maxRequestBody+1)
	if code, _ := send("/api/v1/targets/tofu/baseline", map[string]string{RequestHeader: "1"}, `{"reason":"`+big+`"}`); code < 400 {
		t.Errorf("a %d-byte body was accepted", len(big))
	}
}

// TestSecurityHeaders: every page and file the pages load carries the
// CSP (no inline script), nosniff, no-referrer and DENY framing, and no
// page holds an inline script, style or event handler the CSP would
// block (a console error in a browser).
func TestSecurityHeaders(t *testing.T) {
	src := &fakeSource{ready: true, rep: &probe.Report{Target: "orders", Success: true}}
	srv := serve(t, true, src)
	for _, path := range []string{"/", "/targets/orders", "/targets/orders/schema?tool=search&direction=input", "/config",
		"/style.css", "/app.js", "/favicon.svg", "/api/v1/targets", "/metrics", "/-/healthy", "/targets/nope"} {
		code, body, h := do(t, "GET", srv.URL+path)
		if code != 200 && path != "/targets/nope" {
			t.Errorf("GET %s: %d", path, code)
		}
		for k, want := range map[string]string{
			"Content-Security-Policy": contentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
			"X-Frame-Options":         "DENY",
		} {
			if got := h.Get(k); got != want {
				t.Errorf("GET %s: %s = %q, want %q", path, k, got, want)
			}
		}
		if !strings.Contains(h.Get("Content-Type"), "text/html") {
			continue
		}
		for _, bad := range []string{"<script>", " style=", " onclick=", " onload=", "<style", "javascript:"} {
			if strings.Contains(body, bad) {
				t.Errorf("GET %s holds %q, which the CSP blocks", path, bad)
			}
		}
	}
	for _, d := range []string{"script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(contentSecurityPolicy, d) || strings.Contains(contentSecurityPolicy, "unsafe-inline") {
			t.Errorf("CSP lacks %q or allows inline", d)
		}
	}
	// The buttons are there with the lifecycle flag, and load the script.
	if _, body, _ := do(t, "GET", srv.URL+"/targets/orders"); !strings.Contains(body, `data-post="/api/v1/targets/orders/probe"`) || !strings.Contains(body, `<script src="/app.js" defer></script>`) {
		t.Errorf("target page lacks its Run now button or app.js:\n%s", body)
	}
	if _, body, _ := do(t, "GET", srv.URL+"/app.js"); !strings.Contains(body, `"X-Driftd-Request": "1"`) {
		t.Errorf("app.js does not send %s", RequestHeader)
	}
	off := serve(t, false, src)
	if _, body, _ := do(t, "GET", off.URL+"/targets/orders"); strings.Contains(body, "data-post") {
		t.Error("a button shows without --web.enable-lifecycle")
	}
}

// wideSchema is an object schema of n properties.
func wideSchema(n, maxLen int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field_%04d":{"type":"string","description":"the field number %d of the order","maxLength":%d}`, i, i, maxLen)
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestSchemaViewBounded: a 1,500-property schema against a changed one
// renders within a per-request allocation bound (the O(n·m) table took
// ~150 MB a view), stops at its row bound with a link to the raw JSON,
// and past MaxSchemaViews views at once the next answers 503.
func TestSchemaViewBounded(t *testing.T) {
	src := &fakeSource{ready: true,
		declared: `{"tools":[{"name":"search","inputSchema":` + wideSchema(1500, 64) + `}]}`,
		served:   `{"name":"search","inputSchema":` + wideSchema(1500, 10) + `}`}
	srv := serve(t, false, src)
	url := srv.URL + "/targets/orders/schema?tool=search&direction=input&pointer=/"
	code, body, _ := do(t, "GET", url)
	if code != 200 || !strings.Contains(body, `class="l-changed"`) || !strings.Contains(body, "served tools as a manifest (JSON)") {
		t.Fatalf("view: %d %.2000s", code, body)
	}
	if rows := strings.Count(body, "<tr class="); rows > maxViewRows {
		t.Errorf("%d rows, bound %d", rows, maxViewRows)
	}
	const maxBytes = 16 << 20
	h := New(src, Options{Version: "test", Metrics: http.NotFoundHandler()})
	allocs := allocated(t, func() {
		w := &discard{h: http.Header{}}
		req, _ := http.NewRequest("GET", url, nil)
		h.ServeHTTP(w, req)
		if w.code != 0 && w.code != 200 {
			t.Fatalf("view: %d", w.code)
		}
	})
	t.Logf("one view of a 1,500-property schema allocates %d KiB (bound %d KiB)", allocs>>10, maxBytes>>10)
	if allocs > maxBytes {
		t.Errorf("one view allocated %d bytes, bound %d", allocs, maxBytes)
	}

	// Hold MaxSchemaViews views inside the source; every other one is 503.
	gate := make(chan struct{})
	src = &fakeSource{ready: true, gate: gate, entered: make(chan struct{}, 8)}
	limited := serveWith(t, src, Options{MaxSchemaViews: 2, Metrics: http.NotFoundHandler()})
	var held sync.WaitGroup
	for range 2 {
		held.Go(func() {
			if code, _, _ := do(t, "GET", limited.URL+"/targets/orders/schema?tool=search&direction=input"); code != 200 {
				t.Errorf("a held view answered %d", code)
			}
		})
	}
	for range 2 {
		<-src.entered
	}
	for range 5 {
		code, _, h := do(t, "GET", limited.URL+"/targets/orders/schema?tool=search&direction=input")
		if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
			t.Errorf("a view past the limit: %d, Retry-After %q", code, h.Get("Retry-After"))
		}
	}
	close(gate)
	held.Wait()
	if code, _, _ := do(t, "GET", limited.URL+"/targets/orders/schema?tool=search&direction=input"); code != 200 {
		t.Errorf("after the held views ended: %d", code)
	}
}

func serveWith(t *testing.T, src *fakeSource, opts Options) *httptest.Server {
	srv := httptest.NewServer(New(src, opts))
	t.Cleanup(srv.Close)
	return srv
}

// allocated is how many bytes f allocates on the heap.
func allocated(t *testing.T, f func()) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }

// TestIsHealthCheck: exactly GET or HEAD of the two health paths, under
// the route prefix, skip the web config's auth; nothing near them does.
func TestIsHealthCheck(t *testing.T) {
	for _, tc := range []struct {
		method, path, prefix string
		want                 bool
	}{
		{"GET", "/-/healthy", "", true},
		{"HEAD", "/-/ready", "/", true},
		{"GET", "/driftd/-/healthy", "/driftd/", true},
		{"GET", "/-/healthy", "/driftd", false},
		{"POST", "/-/healthy", "", false},
		{"GET", "/-/healthy/", "", false},
		{"GET", "/-/reload", "", false},
		{"GET", "/metrics", "", false},
		{"GET", "/x/-/healthy", "", false},
	} {
		r, _ := http.NewRequest(tc.method, "http://h"+tc.path, nil)
		if got := IsHealthCheck(r, tc.prefix); got != tc.want {
			t.Errorf("%s %s (prefix %q) = %v", tc.method, tc.path, tc.prefix, got)
		}
	}
}
