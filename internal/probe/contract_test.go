package probe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// answerDiscover puts a front before next that answers server/discover
// with HTTP 200 and result, as some 2025 servers answer any method.
func answerDiscover(result string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &req) == nil && req.Method == "server/discover" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// TestDiscoverWithoutKnownVersionIsLegacy: a 200 DiscoverResult naming no
// version driftd speaks, or none at all, is legacy evidence: initialize is
// tried, the server is compared, and nothing says it refused a revision.
func TestDiscoverWithoutKnownVersionIsLegacy(t *testing.T) {
	for _, result := range []string{`{}`, `{"supportedVersions":["2099-01-01"],"capabilities":{}}`} {
		t.Run(result, func(t *testing.T) {
			srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), Legacy: true, Sessions: true})
			defer srv.Close()
			front := httptest.NewServer(answerDiscover(result)(srv.Handler))
			defer front.Close()
			rep := probeOnce(t, srv, declare(t, "a"), func(tg *config.Target) { tg.URL = front.URL + mcptest.EndpointPath })
			if !rep.Success || has(rep, catalogue.DriftProtocolUnsupported) || !has(rep, catalogue.DriftLegacyServer) || rep.Era != "legacy" {
				t.Fatalf("success %v, era %q, findings %v", rep.Success, rep.Era, rep.Findings)
			}
			if srv.Count("initialize") == 0 {
				t.Errorf("initialize sent %d times", srv.Count("initialize"))
			}
		})
	}
}

// TestNamelessToolsEachCounted: every served tool without a usable name —
// null, missing, empty, not a string — is its own ERROR finding,
// identified by its position, and none is mistaken for a name-format one.
func TestNamelessToolsEachCounted(t *testing.T) {
	served := append(tools("a"),
		json.RawMessage(`{"name":null,"inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":7,"inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":null,"inputSchema":{"type":"object"}}`))
	srv := mcptest.NewServer(mcptest.Options{Tools: served})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), nil)
	var pointers []string
	for _, f := range rep.Findings {
		switch f.Rule {
		case catalogue.ConfToolName:
			if f.Severity != catalogue.Error {
				t.Errorf("severity %s", f.Severity)
			}
			pointers = append(pointers, f.Pointer)
		case catalogue.ConfToolNameFormat, catalogue.ConfDuplicateTool:
			t.Errorf("nameless tool reported as %s: %s", f.Rule, f.Message)
		}
	}
	slices.Sort(pointers)
	if want := []string{"/tools/1", "/tools/2", "/tools/3", "/tools/4", "/tools/5"}; !slices.Equal(pointers, want) {
		t.Errorf("pointers %v, want %v", pointers, want)
	}
}
