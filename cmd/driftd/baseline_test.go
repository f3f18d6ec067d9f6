package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBaselineAccept(t *testing.T) {
	var got struct{ method, path, by, reason, header string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct{ By, Reason string }
		_ = json.Unmarshal(b, &body)
		got.method, got.path, got.by, got.reason, got.header = r.Method, r.URL.Path, body.By, body.Reason, r.Header.Get("X-Driftd-Request")
		switch r.URL.Path {
		case "/api/v1/targets/tofu/baseline":
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"status":"accept requested"}`))
		case "/api/v1/targets/orders/baseline":
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error":"the target is compared against a manifest"}`))
		default:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("Lifecycle API is not enabled (--web.enable-lifecycle).\n"))
		}
	}))
	defer srv.Close()
	code, stdout, stderr := driftd(t, "baseline", "accept", "tofu", "--web.url", srv.URL, "--by", "alice", "--reason", "PR 7")
	if code != exitOK || stdout != "tofu: accept requested\n" || got.method != "POST" || got.by != "alice" || got.reason != "PR 7" || got.header != "1" {
		t.Errorf("exit %d %q %q; request %+v", code, stdout, stderr, got)
	}
	if code, _, stderr := driftd(t, "baseline", "accept", "orders", "--web.url", srv.URL); code != exitUsage || !strings.Contains(stderr, "HTTP 409") {
		t.Errorf("manifest target: exit %d %s", code, stderr)
	}
	if code, _, stderr := driftd(t, "baseline", "accept", "x", "--web.url", srv.URL); code != exitUsage || !strings.Contains(stderr, "--web.enable-lifecycle") {
		t.Errorf("lifecycle off: exit %d %s", code, stderr)
	}
	if code, _, _ := driftd(t, "baseline", "accept", "x", "--web.url", "ftp://x"); code != exitUsage {
		t.Errorf("bad URL: exit %d", code)
	}
}
