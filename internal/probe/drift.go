package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// drift compares the served set with the declared manifest.
func (r *run) drift(served *listing) {
	for _, f := range compareSets(r.declared.Tools, served.tools, served.capped) {
		r.emitFrom(served.exchangeOf(f.Tool), f)
	}
}

// checkPaginationCapped reports a listing that reached the page cap with
// more to come.
func checkPaginationCapped(l *listing, maxPages int) []catalogue.Finding {
	if !l.capped {
		return nil
	}
	return one(catalogue.New(catalogue.DriftPaginationCapped, "",
		fmt.Sprintf("stopped after max_list_pages=%d pages with more to come; missing-tool findings are suppressed", maxPages)))
}

// checkProtocolUnsupported reports a server that refused every revision
// driftd speaks.
func checkProtocolUnsupported(me *mcp.Error) []catalogue.Finding {
	return one(catalogue.New(catalogue.DriftProtocolUnsupported, "",
		fmt.Sprintf("%s: the server supports %s, none of which driftd speaks (%s and legacy %v); nothing was compared",
			me.Method, quoteList(me.Supported), mcp.ModernVersion, mcp.LegacyVersions)))
}

// checkLegacyServer reports a session established over legacy initialize.
func checkLegacyServer(s *mcp.Session) []catalogue.Finding {
	if s.Era == mcp.EraModern {
		return nil
	}
	return one(catalogue.New(catalogue.DriftLegacyServer, "",
		fmt.Sprintf("no 2026-07-28 server/discover (%s); compared over legacy initialize at %s, revision not claimed", s.FallbackReason, s.Version)))
}

// compareSets compares declared tools with served ones: presence by name
// (missing tools suppressed when the listing was capped), then each tool
// on both sides. A duplicated served name is compared once, first wins.
func compareSets(declared, served []mcp.Tool, capped bool) []catalogue.Finding {
	servedBy := map[string]mcp.Tool{}
	for _, t := range served {
		if _, dup := servedBy[t.Name]; !dup {
			servedBy[t.Name] = t
		}
	}
	declaredSet := map[string]bool{}
	var out []catalogue.Finding
	for _, d := range declared {
		declaredSet[d.Name] = true
		s, ok := servedBy[d.Name]
		switch {
		case ok:
			out = append(out, catalogue.CompareTool(d, s)...)
		case !capped:
			out = append(out, catalogue.New(catalogue.DriftToolMissing, d.Name, "declared in the manifest, not served"))
		}
	}
	for _, t := range served {
		if !declaredSet[t.Name] {
			declaredSet[t.Name] = true
			out = append(out, catalogue.New(catalogue.DriftToolUndeclared, t.Name, "served, not declared in the manifest"))
		}
	}
	return out
}

// secondConnection lists again on a fresh TCP connection: the tool set
// must not vary per connection.
func (r *run) secondConnection(ctx context.Context, like *mcp.Session, first *listing) {
	c, err := r.client(r.t.HTTPClient, true, nil)
	if err != nil {
		r.rep.Tools.SecondConnection = "failed: config"
		return
	}
	defer c.CloseIdleConnections()
	s, err := c.Open(ctx, like)
	if err != nil {
		r.rep.Tools.SecondConnection = "failed: " + string(mcp.Classify(err))
		return
	}
	defer s.Close(ctx)
	second, err := r.page(ctx, s)
	if err != nil {
		r.rep.Tools.SecondConnection = "failed: listing"
		return
	}
	state, fs := checkToolsetStable(first.names(), second.names())
	r.rep.Tools.SecondConnection = state
	r.emitFrom(second.first(), fs...)
}

func nameSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func sameSet(a, b []string) bool {
	return len(setMinus(a, b)) == 0 && len(setMinus(b, a)) == 0
}

// setMinus returns the names in a that are not in b, sorted.
func setMinus(a, b []string) []string {
	in := nameSet(b)
	var out []string
	for n := range nameSet(a) {
		if !in[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// quoteListMax bounds the names a message quotes: a server may offer a
// million of them.
const quoteListMax = 5

// quoteList quotes the first names, sanitised, and counts the rest.
func quoteList(names []string) string {
	q := make([]string, 0, min(len(names), quoteListMax)+1)
	for _, n := range names[:min(len(names), quoteListMax)] {
		q = append(q, fmt.Sprintf("%q", sanitize.Name(n)))
	}
	if more := len(names) - quoteListMax; more > 0 {
		q = append(q, fmt.Sprintf("and %d more", more))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Unique returns tools with later duplicates of a name removed, and the
// names that were duplicated.
func Unique(tools []mcp.Tool) ([]mcp.Tool, []string) {
	seen := map[string]bool{}
	var out []mcp.Tool
	var dup []string
	for _, t := range tools {
		if seen[t.Name] {
			dup = append(dup, t.Name)
			continue
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	return out, dup
}
