package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A payload as Alertmanager 0.25 sends it, trimmed.
const amPayload = `{"version":"4","status":"firing","receiver":"webhook","groupKey":"{}:{alertname=\"MCPToolMissing\"}",
"alerts":[{"status":"firing","labels":{"alertname":"MCPToolMissing","target":"orders-demo","tool":"cancel_order","severity":"critical"},
"annotations":{"runbook_url":"https://github.com/driftd/driftd/blob/main/docs/runbooks.md#mcptoolmissing"},
"startsAt":"2026-12-02T12:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"0123456789abcdef"},
{"status":"resolved","labels":{"alertname":"DriftdProbeFailing","target":"orders-demo"},"annotations":{},"startsAt":"2026-12-02T12:00:00Z"}]}`

func TestRecordAndMatch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "received.jsonl")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv := httptest.NewServer(newHandler(f, io.Discard))
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/alerts", "application/json", strings.NewReader(amPayload))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: %s", resp.Status)
	}
	if resp, err := http.Get(srv.URL + "/alerts"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /alerts: %v %v", resp, err)
	}
	if resp, err := http.Post(srv.URL+"/alerts", "application/json", strings.NewReader("{")); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad POST: %v %v", resp, err)
	}

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-status", "firing", "-label", "alertname=MCPToolMissing", "-label", "target=orders-demo", "-label", "tool=cancel_order",
			"-annotation", "runbook_url=https://github.com/driftd/driftd/blob/main/docs/runbooks.md#mcptoolmissing"}, 0},
		{[]string{"-label", "alertname=DriftdProbeFailing"}, 0},
		{[]string{"-status", "firing", "-label", "alertname=DriftdProbeFailing"}, 1}, // it was resolved
		{[]string{"-label", "tool=refund"}, 1},
		{[]string{"-label", "alertname=MCPToolMissing", "-label", "missing="}, 1}, // an absent label never matches
		{[]string{"-label", "nonsense"}, 2},
	} {
		var stdout bytes.Buffer
		if got := match(append([]string{"-in", out}, tc.args...), &stdout); got != tc.code {
			t.Errorf("match %v = %d, want %d", tc.args, got, tc.code)
		}
		if tc.code == 0 && !strings.Contains(stdout.String(), `"alertname"`) {
			t.Errorf("match %v printed %q", tc.args, stdout.String())
		}
	}
	if got := match([]string{"-in", filepath.Join(t.TempDir(), "none"), "-label", "a=b"}, io.Discard); got != 1 {
		t.Errorf("match on a missing file = %d, want 1", got)
	}
}

func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ready")
	}))
	defer srv.Close()
	var stdout bytes.Buffer
	if got := get([]string{srv.URL + "/ok"}, &stdout); got != 0 || stdout.String() != "ready" {
		t.Errorf("get /ok = %d %q", got, stdout.String())
	}
	if got := get([]string{srv.URL + "/nope"}, io.Discard); got != 1 {
		t.Errorf("get /nope = %d, want 1", got)
	}
}
