package probe

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/poison"
	"github.com/driftd/driftd/internal/sanitize"
)

// drift compares the served tools with the declared manifest's, when it
// declares tools.
func (r *run) drift(served *listing) {
	if !r.declared.Declares(mcp.KindTool) {
		return
	}
	for f := range compareSets(r.opts.Caches, r.declared, served.tools, served.capped, r.ref) {
		r.emitFrom(served.exchangeOf(f.Tool), f)
	}
}

// checkPaginationCapped reports a listing of k that reached the page cap
// with more to come.
func checkPaginationCapped(k mcp.Kind, capped bool, maxPages int) []catalogue.Finding {
	if !capped {
		return nil
	}
	return kinded(k, catalogue.New(catalogue.DriftPaginationCapped, "",
		fmt.Sprintf("%s stopped after max_list_pages=%d pages with more to come; missing-%s findings are suppressed", k.Method(), maxPages, k.Noun())))
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

// compareSets compares declared tools (of ref: "manifest" or "baseline"),
// whose names are distinct, with served ones: presence by name
// (missing tools suppressed when the listing was capped), then each tool
// on both sides, and yields the findings in that order. A duplicated
// served name is compared once, first wins. The findings are yielded, not
// gathered, so 10,000 tools' findings are not copied into one more slice
// of megabytes before the report takes them.
func compareSets(c *Caches, declared *manifest.Manifest, served []mcp.Tool, capped bool, ref string) iter.Seq[catalogue.Finding] {
	return func(yield func(catalogue.Finding) bool) {
		pairs, undeclared := matchNames(declared.Tools, served)
		for k, d := range declared.Tools {
			i := k // the same order: tool k is served as tool k
			if pairs != nil {
				i = pairs[k]
			}
			switch {
			case i >= 0:
				s := served[i]
				fs := manifest.Compared(declared, k, s.Sum, func() []catalogue.Finding {
					return append(catalogue.CompareTool(c.Schema(), d, s), poison.Growth("", d.Name, d.Description, s.Description)...)
				}, findingsWeight)
				for _, f := range fs {
					if !yield(f) {
						return
					}
				}
			case !capped:
				if !yield(catalogue.New(catalogue.DriftToolMissing, d.Name, "declared in the "+ref+", not served")) {
					return
				}
			}
		}
		for _, name := range undeclared {
			if !yield(catalogue.New(catalogue.DriftToolUndeclared, name, "served, not declared in the "+ref)) {
				return
			}
		}
	}
}

// findingsWeight is what a tool's findings weigh remembered on the
// manifest (manifest.Compared): the findings, their messages, and as much
// again for the diff's texts they point into (pointer, declared and
// served, which the messages repeat), kept alive with them; the other
// texts are the catalogue's.
func findingsWeight(fs []catalogue.Finding) int {
	w := cap(fs) * int(unsafe.Sizeof(catalogue.Finding{}))
	for _, f := range fs {
		w += 2 * len(f.Message)
	}
	return w
}

// matchNames pairs each declared tool with the first served tool of its
// name (-1 for none), and lists the served names not declared, once each,
// in served order. A listing in the manifest's order, the usual case, is
// recognised in one pass over the names and pairs nothing: pairs is nil,
// tool k is served as tool k, and a daemon's run of a target served as
// before allocates nothing here (the pairs of 10,000 tools were 80 KB of
// fresh memory a run). The maps of the general case cost a cache miss or
// two per tool once there are thousands.
func matchNames(declared, served []mcp.Tool) (pairs []int, undeclared []string) {
	if sameOrder(declared, served) {
		return nil, nil
	}
	pairs = make([]int, len(declared))
	servedBy := make(map[string]int, len(served))
	for i, t := range served {
		if _, dup := servedBy[t.Name]; !dup {
			servedBy[t.Name] = i
		}
	}
	declaredSet := make(map[string]bool, len(declared))
	for k, d := range declared {
		declaredSet[d.Name] = true
		i, ok := servedBy[d.Name]
		if !ok {
			i = -1
		}
		pairs[k] = i
	}
	for _, t := range served {
		if !declaredSet[t.Name] {
			declaredSet[t.Name] = true
			undeclared = append(undeclared, t.Name)
		}
	}
	return pairs, undeclared
}

// sameOrder reports whether both lists name the same tools in the same
// order: then tool k is tool k's first namesake and none is missing or
// undeclared. The declared names are distinct (a manifest's are: loading
// refuses a second definition, and ServedManifest keeps the first), so
// equal names position by position make the served ones distinct too, and
// no set of names is built: at 10,000 tools that set cost a tenth of the
// diff.
func sameOrder(declared, served []mcp.Tool) bool {
	if len(declared) != len(served) {
		return false
	}
	for k := range declared {
		if declared[k].Name != served[k].Name {
			return false
		}
	}
	return true
}

// secondListing is the tools listing of the second-connection check,
// read beside the first: a fresh connection, a session opened like the
// first, and its tools/list pages, unparsed. It runs from the moment the
// first connection's era is known (a modern server's discovery, or a
// legacy server's fallback to initialize), so its round trips overlap the
// first's instead of following them; secondConnection compares it once
// the first listing is in. Its goroutine only reads the run's settings and
// draws on the run's byte budget (atomic); nothing it does reaches the
// report until secondConnection, on the run's goroutine, after wait.
type secondListing struct {
	cancel context.CancelFunc
	done   chan struct{}
	closed sync.Once

	c      *mcp.Client
	s      *mcp.Session
	l      *listing
	failed string // "failed: …" for Tools.SecondConnection, or ""
}

// startSecond starts the second connection's listing, in a session like
// like: the session the run opened, or, for a legacy server, the era,
// version asked for and reason of the one it is opening.
//
// lastID is the id of the first connection's last request: the second
// numbers its requests from there, so that it asks exactly what the
// first asks next, ids and all, and a server that answers both alike
// answers the same bytes, which are decoded once (mcp.Decoded).
func (r *run) startSecond(ctx context.Context, like *mcp.Session, lastID int64) *secondListing {
	ctx, cancel := context.WithCancel(ctx)
	sl := &secondListing{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(sl.done)
		c, err := r.client(false, true, nil)
		if err != nil {
			sl.failed = "failed: config"
			return
		}
		sl.c = c
		c.StartIDsAfter(lastID)
		if sl.s, err = c.Open(ctx, like); err != nil {
			sl.failed = "failed: " + string(mcp.Classify(err))
			return
		}
		if sl.l, err = r.fetch(ctx, sl.s, true, r.known(sl.s)); err != nil {
			sl.failed = "failed: listing"
		}
	}()
	return sl
}

// close stops the listing if it still runs, waits for it, and closes its
// session and connections; ctx bounds the session's close.
func (sl *secondListing) close(ctx context.Context) {
	sl.closed.Do(func() {
		sl.cancel()
		<-sl.done
		if sl.s != nil {
			sl.s.Close(ctx)
		}
		if sl.c != nil {
			sl.c.CloseIdleConnections()
		}
	})
}

// secondConnection compares the second connection's listing with the
// first (MCP-CONF-TOOLSET-VARIES, …), then lists the other kinds on it.
func (r *run) secondConnection(ctx context.Context, sl *secondListing, first *listing, items map[mcp.Kind]*itemListing) {
	defer sl.close(ctx)
	<-sl.done
	if sl.failed != "" {
		r.rep.Tools.SecondConnection = sl.failed
		return
	}
	second := sl.l
	if first.unread != nil && second.unread != nil {
		// Both were answered the last run's bytes (Recall): the same.
		r.rep.Tools.SecondConnection = "same"
		r.secondItems(ctx, sl.s, items)
		return
	}
	if err := first.read(nil); err != nil { // not met: bytes that decoded before
		r.failErr(first.failedEx, err)
		return
	}
	if second.unread == nil {
		second.parseLike(first)
	} else if err := second.read(first); err != nil {
		r.rep.Tools.SecondConnection = "failed: listing"
		return
	}
	r.fromListing(func() {
		state, fs := checkToolsetStable(mcp.KindTool, first.names(), second.names())
		r.rep.Tools.SecondConnection = state
		r.emitFrom(second.first(), fs...)
	})
	r.secondItems(ctx, sl.s, items)
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
