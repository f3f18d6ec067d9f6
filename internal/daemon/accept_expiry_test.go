package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
	"github.com/driftd/driftd/internal/web"
)

// TestAcceptExpires: a pending accept that no run served within
// state.AcceptTTL is dropped, with an event saying so; before then it
// waits.
func TestAcceptExpires(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { nowFunc = f }(nowFunc)
	store, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := state.Loaded(state.NewState("tofu"))
	run = state.WithPendingAccept(run, state.NewAccept("sha256:reviewed", "alice", "", "PR 7", t0), "", t0, historyLimit)
	down := probe.Failed(config.NewTarget("tofu", "http://127.0.0.1:1/mcp"), mcp.ReasonConnect, "refused", probe.Options{})
	d := &Daemon{}
	log := slog.New(slog.DiscardHandler)

	nowFunc = func() time.Time { return t0.Add(state.AcceptTTL - time.Minute) }
	if out, _ := d.afterBaselineRun(run, down, false, log); out.State.PendingAccept == nil {
		t.Fatal("the accept expired early")
	}
	nowFunc = func() time.Time { return t0.Add(state.AcceptTTL) }
	out, accepted := d.afterBaselineRun(run, down, false, log)
	if out.State.PendingAccept != nil || accepted {
		t.Fatalf("the accept did not expire: %+v", out.State.PendingAccept)
	}
	h, err := store.History(out.State)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) == 0 || !strings.Contains(h[len(h)-1].Message, "expired") || h[len(h)-1].By != "alice" || h[len(h)-1].Digest != "sha256:reviewed" {
		t.Fatalf("no expiry event: %+v", h)
	}
}

// TestIdentity: a verified certificate's subject, else the basic-auth user
// only when the web config has users (the exporter-toolkit checked the
// password), else anonymous.
func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	withUsers, without := filepath.Join(dir, "users.yml"), filepath.Join(dir, "tls.yml")
	_ = os.WriteFile(withUsers, []byte("basic_auth_users:\n  alice: $2y$10$notchecked\n"), 0o600)
	_ = os.WriteFile(without, []byte("tls_server_config: {}\n"), 0o600)
	for _, c := range []struct {
		file string
		req  web.AcceptRequest
		want string
	}{
		{withUsers, web.AcceptRequest{BasicAuthUser: "alice", ClaimedBy: "mallory"}, "alice"},
		{without, web.AcceptRequest{BasicAuthUser: "alice"}, "anonymous"},
		{"", web.AcceptRequest{BasicAuthUser: "alice"}, "anonymous"},
		{without, web.AcceptRequest{CertSubject: "CN=bob", BasicAuthUser: "alice"}, "CN=bob"},
		{withUsers, web.AcceptRequest{ClaimedBy: "mallory"}, "anonymous"},
	} {
		d := &Daemon{opts: Options{WebConfigFile: c.file}}
		if got := d.identity(c.req); got != c.want {
			t.Errorf("%s %+v: %q, want %q", c.file, c.req, got, c.want)
		}
	}
}
