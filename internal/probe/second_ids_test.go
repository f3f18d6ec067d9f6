package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/benchgen"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// TestSecondConnectionAsksAlike: a run's second connection asks
// tools/list with the first connection's id, modern and legacy, so that
// a server answering both alike answers the same bytes, which
// mcp.Decoded decodes once.
func TestSecondConnectionAsksAlike(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		srv := mcptest.NewServer(mcptest.Options{Tools: benchgen.Tools(3, false), Legacy: legacy})
		up, _ := url.Parse(srv.URL)
		var mu sync.Mutex
		var ids []string
		proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: up.Scheme, Host: up.Host})
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var msg struct {
				Method string          `json:"method"`
				ID     json.RawMessage `json:"id"`
			}
			if json.Unmarshal(b, &msg) == nil && msg.Method == "tools/list" {
				mu.Lock()
				ids = append(ids, string(msg.ID))
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			proxy.ServeHTTP(w, r)
		}))
		target := config.NewTarget("mock", front.URL+up.Path)
		target.Timeout = 5 * time.Second
		rep := probe.Run(context.Background(), probe.Prepare(target, nil), probe.Options{Version: "test"})
		front.Close()
		srv.Close()
		if !rep.Success || rep.Tools.SecondConnection != "same" {
			t.Fatalf("legacy %v: run: %v %s %s, second connection %q", legacy, rep.Success, rep.FailureReason, rep.FailureMessage, rep.Tools.SecondConnection)
		}
		if len(ids) != 2 || ids[0] != ids[1] {
			t.Errorf("legacy %v: tools/list asked with ids %v, want one id twice", legacy, ids)
		}
	}
}
