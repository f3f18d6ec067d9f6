package probe

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
)

// TestEvidenceOfManyTools: with 50,000 served tools nearly all undeclared,
// every finding names the page its tool was first listed in (the lookup
// once scanned every tool per finding).
func TestEvidenceOfManyTools(t *testing.T) {
	const n, perPage = 50_000, 997
	l := &listing{}
	for p := 0; p*perPage < n; p++ {
		l.pageEx = append(l.pageEx, &mcp.Exchange{TraceID: "trace", SpanID: fmt.Sprint("page-", p)})
	}
	for i := range n {
		l.raw = append(l.raw, json.RawMessage(fmt.Sprintf(`{"name":"t%d","inputSchema":{"type":"object"}}`, i)))
		l.rawPage = append(l.rawPage, i/perPage)
	}
	// t7 again on the last page: its evidence stays the first listing's.
	l.raw = append(l.raw, json.RawMessage(`{"name":"t7"}`))
	l.rawPage = append(l.rawPage, len(l.pageEx)-1)
	l.parse()

	declared := &manifest.Manifest{Tools: []mcp.Tool{{Name: "t0"}, {Name: "gone"}}}
	r := startRun("many", "http://127.0.0.1/mcp", declared, Options{}, time.Now())
	r.drift(l)
	undeclared := 0
	for _, f := range r.findings {
		want := "page-0" // a tool not served: the first page
		if f.Rule == catalogue.DriftToolUndeclared {
			undeclared++
			var i int
			if _, err := fmt.Sscanf(f.Tool, "t%d", &i); err != nil {
				t.Fatalf("tool %q", f.Tool)
			}
			want = fmt.Sprint("page-", i/perPage)
		}
		if f.TraceID != "trace" || f.SpanID != want {
			t.Fatalf("%s %s names span %s/%s, want trace/%s", f.Rule, f.Tool, f.TraceID, f.SpanID, want)
		}
	}
	if undeclared != n-1 || !hasRule(r.findings, catalogue.DriftToolMissing) {
		t.Fatalf("%d undeclared findings, want %d, and one missing", undeclared, n-1)
	}
}

func hasRule(fs []catalogue.Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// TestParseLike: a listing that repeats another's definitions byte for
// byte, paged differently, parses as parse would, sharing the tools; one
// definition changed and it is parsed afresh.
func TestParseLike(t *testing.T) {
	raws := []string{`{"name":"a"}`, `{"title":"no name"}`, `{"name":"b","description":"x"}`, `{"name":"a"}`, `7`, `{"name":"c"}`}
	listed := func(perPage int, raws []string) *listing {
		l := &listing{}
		for i, r := range raws {
			l.raw = append(l.raw, json.RawMessage(r))
			l.rawPage = append(l.rawPage, i/perPage)
		}
		return l
	}
	first := listed(4, raws)
	first.parse()
	for _, tc := range []struct {
		name   string
		raws   []string
		shared bool
	}{
		{"same definitions", raws, true},
		{"one changed", append(append([]string{}, raws[:5]...), `{"name":"d"}`), false},
		{"one fewer", raws[:5], false},
	} {
		got, want := listed(2, tc.raws), listed(2, tc.raws)
		got.parseLike(first)
		want.parse()
		if fmt.Sprint(got.tools, got.unnamed, got.toolPage, got.pageOf) != fmt.Sprint(want.tools, want.unnamed, want.toolPage, want.pageOf) {
			t.Errorf("%s: parseLike gave %v %v %v %v, parse %v %v %v %v", tc.name,
				got.names(), got.unnamed, got.toolPage, got.pageOf, want.names(), want.unnamed, want.toolPage, want.pageOf)
		}
		if shared := len(got.tools) > 0 && &got.tools[0] == &first.tools[0]; shared != tc.shared {
			t.Errorf("%s: tools shared with the first listing = %v, want %v", tc.name, shared, tc.shared)
		}
	}
}
