package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// TestPrepareBeside: a manifest read beside the run is compared as if read
// before it, and the listing does not wait for it; one that cannot be read
// ends the run as config; one still
// being read at the deadline ends it as timeout, within the deadline plus
// one second; and a plan with calls reads it before anything is sent.
func TestPrepareBeside(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b")})
	defer srv.Close()
	target := config.NewTarget("mock", srv.URL)
	target.Timeout = 2 * time.Second

	declared := declare(t, "a", "c")
	p, wait := probe.PrepareBeside(target, nil, func() (*manifest.Manifest, error) {
		time.Sleep(50 * time.Millisecond) // still reading when the run connects
		return declared, nil
	})
	if p.Pending == nil {
		t.Fatal("a plan without calls does not read the manifest beside the run")
	}
	rep := probe.Run(context.Background(), p, probe.Options{Version: "test"})
	if m, err := wait(context.Background()); m != declared || err != nil {
		t.Errorf("wait = %v, %v", m, err)
	}
	if !rep.Success || rep.ComparedAgainst != "manifest" || rep.Tools.Declared != 2 || !has(rep, catalogue.DriftToolMissing) {
		t.Errorf("the pending manifest was not compared against:\n%s", reportJSON(rep))
	}
	if err := srv.CheckNoViolations(); err != nil {
		t.Error(err)
	}

	// The manifest is awaited only by the listing's checks: both
	// connections' tools/list go out while it is still being read.
	srv.Reset()
	listed := false
	p, _ = probe.PrepareBeside(target, nil, func() (*manifest.Manifest, error) {
		for deadline := time.Now().Add(target.Timeout / 2); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if listed = srv.Count("tools/list") >= 2; listed {
				break
			}
		}
		return declared, nil
	})
	if rep := probe.Run(context.Background(), p, probe.Options{Version: "test"}); !rep.Success || !listed || !has(rep, catalogue.DriftToolMissing) {
		t.Errorf("the first listing waited for the manifest (both listings sent while it was read: %v):\n%s", listed, reportJSON(rep))
	}

	// What the declared tools were checked for beside the run (precheck)
	// is found again for the served ones: a schema that does not compile,
	// served as declared, is reported.
	caches := probe.NewCaches(0)
	broken := json.RawMessage(`{"name":"broken","inputSchema":{"type":"object","properties":{"q":{"type":5}}}}`)
	srv.SetTools([]json.RawMessage{broken})
	p, _ = probe.PrepareBeside(target, caches, func() (*manifest.Manifest, error) { return declareRaw(t, []json.RawMessage{broken}), nil })
	if rep := probe.Run(context.Background(), p, probe.Options{Version: "test", Caches: caches}); !rep.Success || !has(rep, catalogue.ConfSchemaInvalid) {
		t.Errorf("a declared schema that does not compile, served as declared, is not reported:\n%s", reportJSON(rep))
	}
	srv.SetTools(tools("a", "b"))

	// A listing that fails still reports what it was compared against.
	srv.SetOptions(func(o *mcptest.Options) { o.Fault, o.FaultMethods = mcptest.FaultStatus500, []string{"tools/list"} })
	p, _ = probe.PrepareBeside(target, nil, func() (*manifest.Manifest, error) { return declared, nil })
	if rep := probe.Run(context.Background(), p, probe.Options{Version: "test"}); rep.Success || rep.ComparedAgainst != "manifest" || rep.Tools.Declared != 2 {
		t.Errorf("a failed listing: success %v, compared against %q, %d declared; want the manifest's 2", rep.Success, rep.ComparedAgainst, rep.Tools.Declared)
	}
	srv.SetOptions(func(o *mcptest.Options) { o.Fault, o.FaultMethods = mcptest.FaultNone, nil })

	bad := errors.New("tools[0]: no name")
	p, _ = probe.PrepareBeside(target, nil, func() (*manifest.Manifest, error) { return nil, bad })
	if rep := probe.Run(context.Background(), p, probe.Options{Version: "test"}); rep.Success || rep.FailureReason != "config" {
		t.Errorf("an unreadable manifest: success %v, reason %q, want config", rep.Success, rep.FailureReason)
	}

	release := make(chan struct{})
	defer close(release)
	p, _ = probe.PrepareBeside(target, nil, func() (*manifest.Manifest, error) { <-release; return declared, nil })
	start := time.Now()
	rep = probe.Run(context.Background(), p, probe.Options{Version: "test"})
	if took := time.Since(start); rep.FailureReason != "timeout" || took > target.Timeout+time.Second {
		t.Errorf("a manifest read past the deadline: reason %q after %v, want timeout within %v", rep.FailureReason, took, target.Timeout+time.Second)
	}

	invoking := target
	invoking.Invoke.Tools = []string{"a"}
	read := false
	p, wait = probe.PrepareBeside(invoking, nil, func() (*manifest.Manifest, error) { read = true; return declared, nil })
	if p.Pending != nil || !read || p.Declared != declared {
		t.Errorf("a plan with calls: pending %v, read %v; the gates need the manifest first", p.Pending != nil, read)
	}
	if m, err := wait(context.Background()); m != declared || err != nil {
		t.Errorf("wait = %v, %v", m, err)
	}
}

// TestSecondConnectionBesideHandshake: with a legacy server, the second
// connection's initialize is sent as soon as the discovery falls back,
// while the first connection's initialize is still unanswered, and the
// run compares both listings as before.
func TestSecondConnectionBesideHandshake(t *testing.T) {
	h := mcptest.NewHandler(mcptest.Options{Tools: tools("a", "b"), Legacy: true})
	var inits atomic.Int32
	arrived := make(chan struct{})
	var overlapped atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			switch inits.Add(1) {
			case 1: // the first initialize waits for the second's
				select {
				case <-arrived:
					overlapped.Store(true)
				case <-time.After(5 * time.Second):
				}
			case 2:
				close(arrived)
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	target := config.NewTarget("mock", srv.URL+"/mcp")
	target.Timeout = 10 * time.Second
	rep := probe.Run(context.Background(), probe.Prepare(target, declare(t, "a", "b")), probe.Options{Version: "test"})
	if !overlapped.Load() || !rep.Success || rep.Tools.SecondConnection != "same" {
		t.Errorf("second initialize sent beside the first: %v; success %v, second connection %q", overlapped.Load(), rep.Success, rep.Tools.SecondConnection)
	}
	if err := h.CheckNoViolations(); err != nil {
		t.Error(err)
	}
}
