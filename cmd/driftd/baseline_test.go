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
	const served = "sha256:5e7e"
	var got struct{ method, path, digest, by, reason, header string }
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct{ Digest, By, Reason string }
		_ = json.Unmarshal(b, &body)
		if r.Method == http.MethodPost {
			posts++
			got.method, got.path, got.digest, got.by, got.reason, got.header = r.Method, r.URL.Path, body.Digest, body.By, body.Reason, r.Header.Get("X-Driftd-Request")
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/targets":
			_, _ = w.Write([]byte(`{"status":"success","data":[{"name":"orders","drift":"clean"},{"name":"tofu","drift":"drifted","baseline":{"served_digest":"` + served + `","digest":"sha256:01d","origin":"first_seen"}}]}`))
		case r.URL.Path == "/api/v1/targets/tofu/baseline" && body.Digest != served:
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"conflict","error":"the served surface has digest ` + served + `","data":{"digest":"` + served + `"}}`))
		case r.URL.Path == "/api/v1/targets/tofu/baseline":
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"status":"success","data":{"message":"accept recorded","digest":"` + served + `"}}`))
		case r.URL.Path == "/api/v1/targets/orders/baseline":
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"conflict","error":"the target is compared against a manifest"}`))
		default:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("Lifecycle API is not enabled (--web.enable-lifecycle).\n"))
		}
	}))
	defer srv.Close()
	// Without --digest: the digests are shown, nothing is accepted.
	code, stdout, stderr := driftd(t, "baseline", "accept", "tofu", "--web.url", srv.URL)
	if code != exitUsage || posts != 0 || !strings.Contains(stdout, served) || !strings.Contains(stdout, "--digest "+served) || !strings.Contains(stderr, "nothing accepted") {
		t.Errorf("without --digest: exit %d, %d posts, %q %q", code, posts, stdout, stderr)
	}
	code, stdout, stderr = driftd(t, "baseline", "accept", "tofu", "--web.url", srv.URL, "--digest", served, "--by", "alice", "--reason", "PR 7")
	if code != exitOK || stdout != "tofu: accept recorded\n" || got.method != "POST" || got.digest != served || got.by != "alice" || got.reason != "PR 7" || got.header != "1" {
		t.Errorf("exit %d %q %q; request %+v", code, stdout, stderr, got)
	}
	if code, _, stderr := driftd(t, "baseline", "accept", "tofu", "--web.url", srv.URL, "--digest", "sha256:stale"); code != exitUsage || !strings.Contains(stderr, "HTTP 409") || !strings.Contains(stderr, served) {
		t.Errorf("stale digest: exit %d %s", code, stderr)
	}
	if code, _, stderr := driftd(t, "baseline", "accept", "orders", "--web.url", srv.URL, "--digest", served); code != exitUsage || !strings.Contains(stderr, "HTTP 409") {
		t.Errorf("manifest target: exit %d %s", code, stderr)
	}
	if code, _, stderr := driftd(t, "baseline", "accept", "x", "--web.url", srv.URL, "--digest", served); code != exitUsage || !strings.Contains(stderr, "--web.enable-lifecycle") {
		t.Errorf("lifecycle off: exit %d %s", code, stderr)
	}
	if code, _, _ := driftd(t, "baseline", "accept", "x", "--web.url", "ftp://x"); code != exitUsage {
		t.Errorf("bad URL: exit %d", code)
	}
}
