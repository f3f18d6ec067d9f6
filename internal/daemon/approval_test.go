package daemon_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/state"
)

// tofuConfig is a baseline-mode target tofu on srv, run every second.
func tofuConfig(e *env, srv *mcptest.Server) {
	e.write("token", marker)
	e.config(fmt.Sprintf(`
global:
  schedule: "@every 1s"
  timeout: 5s
  state_dir: state
targets:
  - name: tofu
    url: %q
    baseline: first_seen
    skip_auth_probe: true
    http_client:
      authorization: {type: Bearer, credentials_file: token}
`, srv.URL))
}

// baselineStatus is tofu's baseline status as /api/v1/targets shows it.
func baselineStatus(t *testing.T, base string) state.BaselineStatus {
	t.Helper()
	_, body := get(t, base+"/api/v1/targets")
	var rows []struct {
		Name     string                `json:"name"`
		Baseline *state.BaselineStatus `json:"baseline"`
	}
	if err := json.Unmarshal(apiData(body), &rows); err != nil {
		t.Fatalf("targets: %v", err)
	}
	for _, r := range rows {
		if r.Name == "tofu" && r.Baseline != nil {
			return *r.Baseline
		}
	}
	return state.BaselineStatus{}
}

// TestAcceptWhileDownWaitsForItsDigest is issue 35's approval case: an
// accept of a stale digest is 409 with the current one; an accept made
// while the server is down waits, is not applied when the server comes
// back with an older surface, and is applied by the run that serves the
// surface accepted.
func TestAcceptWhileDownWaitsForItsDigest(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b"), BearerToken: marker})
	defer srv.Close()
	tofuConfig(e, srv)
	_, base := e.start(false)
	eventually(t, 20e9, "the first-seen baseline", func() bool { return baselineStatus(t, base).Origin == state.OriginFirstSeen })
	older := baselineStatus(t, base).Digest

	srv.SetOptions(func(o *mcptest.Options) { o.Tools = mockTools("a") })
	waitMetric(t, base, `driftd_findings{rule="MCP-DRIFT-TOOL-MISSING",severity="ERROR",target="tofu"}`, 1)
	reviewed := baselineStatus(t, base).ServedDigest
	if reviewed == "" || reviewed == older {
		t.Fatalf("served digest %q after a change from %q", reviewed, older)
	}
	if code, cur := accept(t, base, older, "alice"); code != http.StatusConflict || cur != reviewed {
		t.Fatalf("a stale digest: %d, current %q, want 409 and %q", code, cur, reviewed)
	}

	// Down: the credential is refused.
	srv.SetOptions(func(o *mcptest.Options) { o.BearerToken = "another" })
	waitMetric(t, base, `driftd_probe_success{target="tofu"}`, 0)
	if code, _ := accept(t, base, reviewed, "alice"); code != http.StatusAccepted {
		t.Fatalf("accept while down: %d", code)
	}
	if p := baselineStatus(t, base).PendingAccept; p == nil || p.Digest != reviewed {
		t.Fatalf("no pending accept of %s: %+v", reviewed, p)
	}
	if _, page := get(t, base+"/targets/tofu"); !strings.Contains(page, "Pending accept") || !strings.Contains(page, reviewed) {
		t.Error("the target page does not show the pending accept")
	}

	// Back, with the older surface: nothing is accepted.
	srv.SetOptions(func(o *mcptest.Options) { o.BearerToken, o.Tools = marker, mockTools("a", "b") })
	eventually(t, 20e9, "a run serving the older surface", func() bool { return baselineStatus(t, base).ServedDigest == older })
	if b := baselineStatus(t, base); b.Origin != state.OriginFirstSeen || b.PendingAccept == nil {
		t.Fatalf("the older surface was taken or the accept dropped: %+v", b)
	}

	// The surface reviewed: accepted.
	srv.SetOptions(func(o *mcptest.Options) { o.Tools = mockTools("a") })
	eventually(t, 20e9, "the accepted baseline", func() bool {
		b := baselineStatus(t, base)
		return b.Origin == state.OriginAccepted && b.Digest == reviewed && b.PendingAccept == nil
	})
}

// TestAcceptRecordsTheAuthenticatedUser: with basic-auth users in the web
// config, the history's by is the user who authenticated; the body's by
// is kept apart as a claim.
func TestAcceptRecordsTheAuthenticatedUser(t *testing.T) {
	e := newEnv(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	e.write("web.yml", "basic_auth_users:\n  alice: "+string(hash)+"\n")
	e.tweak = func(o *daemon.Options) { o.WebConfigFile = filepath.Join(e.dir, "web.yml") }
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b"), BearerToken: marker})
	defer srv.Close()
	tofuConfig(e, srv)
	_, base := e.start(false)
	authGet := func(url string) string {
		req, _ := http.NewRequest("GET", url, nil)
		req.SetBasicAuth("alice", "pw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	var digest string
	eventually(t, 20e9, "a served digest", func() bool {
		var rows []struct {
			Baseline *state.BaselineStatus `json:"baseline"`
		}
		if json.Unmarshal(apiData(authGet(base+"/api/v1/targets")), &rows) != nil || len(rows) != 1 || rows[0].Baseline == nil {
			return false
		}
		digest = rows[0].Baseline.ServedDigest
		return digest != "" && rows[0].Baseline.Origin != ""
	})
	if code, _ := accept(t, base, digest, "mallory", "alice", "pw"); code != http.StatusAccepted {
		t.Fatalf("accept: %d", code)
	}
	eventually(t, 20e9, "the accepted baseline in the history", func() bool {
		var h []state.Event
		_ = json.Unmarshal(apiData(authGet(base+"/api/v1/targets/tofu/history")), &h)
		for _, ev := range h {
			if strings.HasPrefix(ev.Message, "baseline accepted") {
				if ev.By != "alice" || ev.ClaimedBy != "mallory" || ev.Digest != digest {
					t.Fatalf("accepted by %q claimed %q digest %q", ev.By, ev.ClaimedBy, ev.Digest)
				}
				return true
			}
		}
		return false
	})
	if page := authGet(base + "/targets/tofu"); !strings.Contains(page, "by alice") || !strings.Contains(page, "(claimed: mallory)") {
		t.Error("the page does not show the user and the claim apart")
	}
}

// TestNoBaselineFromVariance: a run whose second connection lists another
// tool set records no first-seen baseline; once the connections agree, one
// is recorded.
func TestNoBaselineFromVariance(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b"), OtherConnTools: mockTools("a", "x"), BearerToken: marker})
	defer srv.Close()
	tofuConfig(e, srv)
	_, base := e.start(false)
	waitMetric(t, base, `driftd_findings{rule="MCP-CONF-TOOLSET-VARIES",severity="ERROR",target="tofu"}`, 1)
	waitMetric(t, base, `driftd_probe_success{target="tofu"}`, 1)
	if code, _ := get(t, base+"/api/v1/targets/tofu/baseline"); code != http.StatusNotFound {
		t.Fatalf("a baseline was recorded from a run that saw variance: %d", code)
	}
	srv.SetOptions(func(o *mcptest.Options) { o.OtherConnTools = nil })
	eventually(t, 20e9, "the baseline once the connections agree", func() bool {
		code, _ := get(t, base+"/api/v1/targets/tofu/baseline")
		return code == http.StatusOK
	})
}

// TestCorruptOrNewerStateNeedsReview: a baseline-mode target whose state
// file is corrupt, or was written by a newer driftd, is not re-trusted:
// no baseline is recorded, the status and page say it needs review, a
// newer file is left as it was, and an accept of the served digest ends it.
func TestCorruptOrNewerStateNeedsReview(t *testing.T) {
	for name, content := range map[string]string{
		"corrupt": `{"target":"tofu","version":1,"baseline":{"manif`,
		"newer":   `{"target":"tofu","version":99,"baseline":{"format":"of the future"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b"), BearerToken: marker})
			defer srv.Close()
			tofuConfig(e, srv)
			path := filepath.Join(e.dir, "state", "tofu.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				t.Fatal(err)
			}
			e.write("state/tofu.json", content)
			_, base := e.start(false)
			eventually(t, 20e9, "a served digest", func() bool { return baselineStatus(t, base).ServedDigest != "" })
			waitMetric(t, base, `driftd_probe_success{target="tofu"}`, 1)
			b := baselineStatus(t, base)
			if b.NeedsReview == "" || b.Origin != "" {
				t.Fatalf("not held in needs review: %+v", b)
			}
			if code, _ := get(t, base+"/api/v1/targets/tofu/baseline"); code != http.StatusNotFound {
				t.Fatalf("a baseline was recorded: %d", code)
			}
			waitMetric(t, base, `driftd_findings{rule="MCP-DRIFT-BASELINE-REVIEW",severity="ERROR",target="tofu"}`, 1)
			if _, page := get(t, base+"/targets/tofu"); !strings.Contains(page, "The baseline needs review") {
				t.Error("no needs-review banner on the page")
			}
			if !strings.Contains(e.log.String(), "level=ERROR") || !strings.Contains(e.log.String(), "baseline needs review") {
				t.Error("no ERROR line says the baseline needs review")
			}
			if name == "newer" {
				if got, _ := os.ReadFile(path); string(got) != content {
					t.Fatalf("the newer file was changed: %s", got)
				}
			} else if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 1 {
				t.Fatalf("the corrupt file was not kept aside: %v", m)
			}
			if name == "newer" {
				return // an accept would be pending until the file is dealt with: nothing is written
			}
			if code, _ := accept(t, base, b.ServedDigest, "alice"); code != http.StatusAccepted {
				t.Fatalf("accept: %d", code)
			}
			eventually(t, 20e9, "the accepted baseline", func() bool {
				b := baselineStatus(t, base)
				return b.Origin == state.OriginAccepted && b.NeedsReview == ""
			})
			waitMetric(t, base, `driftd_findings_resolved_total{rule="MCP-DRIFT-BASELINE-REVIEW",severity="ERROR",target="tofu"}`, 1)
		})
	}
}
