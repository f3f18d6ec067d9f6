package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"
	"go.uber.org/goleak"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tool returns a valid tool definition with one string argument.
func tool(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"does %s","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`, name, name))
}

func tools(names ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i] = tool(n)
	}
	return out
}

// declare builds a manifest of valid tools with the given names.
func declare(t testing.TB, names ...string) *manifest.Manifest {
	t.Helper()
	return declareRaw(t, tools(names...))
}

// declareRaw builds a manifest of the given tool definitions.
func declareRaw(t testing.TB, defs []json.RawMessage) *manifest.Manifest {
	t.Helper()
	b, _ := json.Marshal(defs)
	m, err := manifest.Parse(b, ".json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// probeOnce runs one probe of srv and checks that driftd broke no rule of
// the revision on the way.
func probeOnce(t *testing.T, srv *mcptest.Server, declared *manifest.Manifest, tweak func(*config.Target)) *probe.Report {
	t.Helper()
	target := config.NewTarget("mock", srv.URL)
	target.Timeout = 5 * time.Second
	if tweak != nil {
		tweak(&target)
	}
	rep := probe.Run(context.Background(), probe.Prepare(target, declared), probe.Options{Version: "test"})
	if err := srv.CheckNoViolations(); err != nil {
		t.Errorf("driftd sent a request the strict mock rejects: %v", err)
	}
	if t.Failed() {
		t.Logf("report:\n%s", reportJSON(rep))
	}
	return rep
}

func reportJSON(rep *probe.Report) string {
	b, _ := json.MarshalIndent(rep, "", "  ")
	return string(b)
}

func has(rep *probe.Report, rule string) bool { return find(rep, rule) != nil }

func find(rep *probe.Report, rule string) *catalogue.Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Rule == rule {
			return &rep.Findings[i]
		}
	}
	return nil
}

func toolsOf(rep *probe.Report, rule string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f.Tool)
		}
	}
	return out
}

// withBearer configures a bearer token read from a file, as in production.
func withBearer(t *testing.T, token string) func(*config.Target) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(tg *config.Target) {
		tg.HTTPClient.Authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: path}
	}
}

func all(tweaks ...func(*config.Target)) func(*config.Target) {
	return func(t *config.Target) {
		for _, f := range tweaks {
			if f != nil {
				f(t)
			}
		}
	}
}

func mustNotContain(t *testing.T, what, haystack, needle string) {
	t.Helper()
	if strings.Contains(haystack, needle) {
		t.Fatalf("%s contains the marker %q", what, needle)
	}
}

// secretHeader configures header name with a secret value.
func secretHeader(name, value string) func(*config.Target) {
	return func(tg *config.Target) {
		tg.HTTPClient.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{
			name: {Secrets: []promconfig.Secret{promconfig.Secret(value)}},
		}}
	}
}
