package probe

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/poison"
)

// itemListing is the outcome of paging through one list of prompts,
// resources or resource templates: what tools/list's listing is for tools.
type itemListing struct {
	kind mcp.Kind
	raw  []json.RawMessage
	// items are those with a usable Key, in served order; itemPage[i] is
	// the page of items[i], rawPage[i] the page of raw[i].
	items    []mcp.Item
	itemPage []int
	rawPage  []int
	// shapes[i] are the ways raw[i] breaks the list's shape.
	shapes [][]string
	pages  int
	capped bool
	loop   bool
	pageEx []*mcp.Exchange
	meta   []mcp.ResultMeta
	// absent is set when the server answered -32601: it has no such list.
	absent bool
	// pageOf maps a key to the page it was first listed in: evidence
	// lookup is one map read however many items were served.
	pageOf map[string]int
}

func (l *itemListing) first() *mcp.Exchange {
	if len(l.pageEx) == 0 {
		return nil
	}
	return l.pageEx[0]
}

func (l *itemListing) last() *mcp.Exchange {
	if len(l.pageEx) == 0 {
		return nil
	}
	return l.pageEx[len(l.pageEx)-1]
}

// exchangeOf returns the page exchange an item was first listed in, or
// the first page's for an item not served.
func (l *itemListing) exchangeOf(key string) *mcp.Exchange {
	if p, ok := l.pageOf[key]; ok {
		return l.pageEx[p]
	}
	return l.first()
}

func (l *itemListing) keys() []string {
	out := make([]string, len(l.items))
	for i, it := range l.items {
		out[i] = it.Key
	}
	return out
}

// itemKindsToList are the kinds the run lists besides tools: those the
// manifest declares, and those the server advertises.
func (r *run) itemKindsToList(s *mcp.Session) []mcp.Kind {
	var out []mcp.Kind
	for _, k := range mcp.ItemKinds {
		if s.Advertises(k) || (r.declared != nil && r.declared.Declares(k)) {
			out = append(out, k)
		}
	}
	return out
}

// listItems lists every item kind to list on the run's main session,
// emits what each listing shows and, when one fails for any reason but
// -32601 (no such list: nothing served), fails the run as a failed
// tools/list does.
func (r *run) listItems(ctx context.Context, s *mcp.Session) (map[mcp.Kind]*itemListing, bool) {
	out := map[mcp.Kind]*itemListing{}
	for _, k := range r.itemKindsToList(s) {
		l, failedEx, err := r.pageItems(ctx, s, k)
		counts := &ToolCounts{Served: len(l.items), Pages: l.pages, PageCapReached: l.capped, MethodNotFound: l.absent}
		if r.declared != nil && r.declared.Declares(k) {
			counts.Declared = len(r.declared.Items[k])
		}
		r.rep.setCounts(k, counts)
		r.conformItems(ctx, l, s.Era == mcp.EraModern)
		r.emitFrom(l.last(), checkPaginationCapped(k, l.capped, r.t.MaxListPages)...)
		if err != nil {
			r.failErr(failedEx, err)
			return out, false
		}
		out[k] = l
	}
	return out, true
}

// pageItems pages through the list of k up to the page cap, stopping on a
// repeated cursor, with the same limits as tools/list: the run's byte
// budget (every client shares it) and at most MaxTools items.
func (r *run) pageItems(ctx context.Context, s *mcp.Session, k mcp.Kind) (*itemListing, *mcp.Exchange, error) {
	l := &itemListing{kind: k, pageOf: map[string]int{}}
	cur := cursors{seen: map[string]bool{}}
	for {
		p, err := s.ListItems(ctx, k, cur.at)
		if err != nil {
			// No such list: -32601, or any JSON-RPC error from a server
			// that never advertised it (servers word that refusal
			// differently). Served empty, not a failed run.
			if l.pages == 0 && (mcp.IsMethodNotFound(err) || !s.Advertises(k) && mcp.IsRPCError(err)) {
				l.absent = true
				return l, nil, nil
			}
			return l, p.Exchange, err
		}
		l.pages++
		l.pageEx = append(l.pageEx, p.Exchange)
		l.meta = append(l.meta, p.ResultMeta)
		for _, raw := range p.Items {
			it, problems := mcp.ParseItem(k, raw)
			l.rawPage = append(l.rawPage, l.pages-1)
			l.raw = append(l.raw, raw)
			l.shapes = append(l.shapes, problems)
			if it.Key != "" {
				l.items = append(l.items, it)
				l.itemPage = append(l.itemPage, l.pages-1)
				if _, dup := l.pageOf[it.Key]; !dup {
					l.pageOf[it.Key] = l.pages - 1
				}
			}
		}
		if len(l.raw) > MaxTools {
			return l, p.Exchange, &mcp.Error{Reason: mcp.ReasonResponseTooLarge, Method: k.Method(),
				Detail: fmt.Sprintf("more than %d %ss served", MaxTools, k.Noun())}
		}
		var more bool
		if more, l.loop, l.capped = cur.advance(p.HasNext, p.NextCursor, l.pages, r.t.MaxListPages); !more {
			return l, nil, nil
		}
	}
}

// conformItems emits the conformance of one item listing, each finding
// with the page it was read from.
func (r *run) conformItems(ctx context.Context, l *itemListing, modern bool) {
	if modern {
		for i, ex := range l.pageEx {
			for _, check := range pageChecks {
				for _, f := range check(fmt.Sprintf("%s page %d", l.kind.Method(), i+1), l.meta[i]) {
					r.emitFrom(ex, kinded(l.kind, f)...)
				}
			}
		}
	}
	r.emitFrom(l.last(), checkPaginationLoop(l.kind, l.pages, l.loop)...)
	for i, problems := range l.shapes {
		r.emitFrom(l.pageEx[l.rawPage[i]], checkListShape(l.kind, i, problems)...)
	}
	count := map[string]int{}
	for i, it := range l.items {
		if i%1024 == 0 && ctx.Err() != nil {
			return // past the deadline: Run reports the timeout
		}
		count[it.Key]++
		r.emitFrom(l.pageEx[l.itemPage[i]], checkDuplicateItem(it, count[it.Key])...)
		if count[it.Key] == 1 {
			r.emitFrom(l.pageEx[l.itemPage[i]], r.scanner().Item(it)...)
		}
	}
}

// checkListShape reports served item i of a list of k that breaks the
// list's shape: each such item is its own finding, at its position.
func checkListShape(k mcp.Kind, i int, problems []string) []catalogue.Finding {
	if len(problems) == 0 {
		return nil
	}
	f := catalogue.New(catalogue.ConfListShape, "", fmt.Sprintf("served %s[%d] breaks the %s shape: %s",
		k.Key(), i, k.Method(), quoteProblems(problems)))
	f.Pointer = fmt.Sprintf("/%s/%d", k.Key(), i)
	return kinded(k, f)
}

func quoteProblems(problems []string) string {
	out := problems[0]
	for _, p := range problems[1:min(len(problems), 4)] {
		out += "; " + p
	}
	if len(problems) > 4 {
		out += fmt.Sprintf(" (and %d more)", len(problems)-4)
	}
	return out
}

// checkDuplicateItem reports the second served item with one identity.
func checkDuplicateItem(it mcp.Item, nth int) []catalogue.Finding {
	if nth != 2 {
		return nil
	}
	what := "name"
	if it.Kind == mcp.KindResource {
		what = "uri"
	}
	return kinded(it.Kind, catalogue.New(catalogue.ConfDuplicateItem, it.Key,
		fmt.Sprintf("more than one served %s has this %s", it.Kind.Noun(), what)))
}

// driftItems compares each item listing with the manifest's list of its
// kind, when the manifest declares one.
func (r *run) driftItems(ctx context.Context, listings map[mcp.Kind]*itemListing) {
	for _, k := range mcp.ItemKinds {
		if ctx.Err() != nil {
			return // past the deadline: Run reports the timeout
		}
		l, ok := listings[k]
		if !ok || !r.declared.Declares(k) {
			continue
		}
		for _, f := range compareItemSets(k, r.declared.Items[k], l.items, l.capped, r.ref) {
			r.emitFrom(l.exchangeOf(f.Tool), f)
		}
	}
}

// compareItemSets compares declared items of k with served ones by Key:
// presence (missing items suppressed when the listing was capped), then
// each item on both sides. A duplicated served key is compared once,
// first wins.
func compareItemSets(k mcp.Kind, declared, served []mcp.Item, capped bool, ref string) []catalogue.Finding {
	missing, undeclared := catalogue.DriftPromptMissing, catalogue.DriftPromptUndeclared
	switch k {
	case mcp.KindResource:
		missing, undeclared = catalogue.DriftResourceMissing, catalogue.DriftResourceUndeclared
	case mcp.KindResourceTemplate:
		missing, undeclared = catalogue.DriftResourceTemplateMissing, catalogue.DriftResourceTemplateUndeclared
	}
	servedBy := make(map[string]int, len(served))
	for i, it := range served {
		if _, dup := servedBy[it.Key]; !dup {
			servedBy[it.Key] = i
		}
	}
	var out []catalogue.Finding
	declaredSet := make(map[string]bool, len(declared))
	for _, d := range declared {
		declaredSet[d.Key] = true
		if i, ok := servedBy[d.Key]; ok {
			out = append(out, catalogue.CompareItem(d, served[i])...)
			out = append(out, poison.Growth(string(k), d.Key, d.Description, served[i].Description)...)
		} else if !capped {
			out = append(out, kinded(k, catalogue.New(missing, d.Key, "declared in the "+ref+", not served"))...)
		}
	}
	for _, it := range served {
		if !declaredSet[it.Key] {
			declaredSet[it.Key] = true
			out = append(out, kinded(k, catalogue.New(undeclared, it.Key, "served, not declared in the "+ref))...)
		}
	}
	return out
}

// secondItems lists each item kind again on the second connection's
// session and compares the keys with the first listing's.
func (r *run) secondItems(ctx context.Context, s *mcp.Session, first map[mcp.Kind]*itemListing) {
	for _, k := range mcp.ItemKinds {
		l, ok := first[k]
		if !ok || l.absent || ctx.Err() != nil {
			continue
		}
		counts := r.rep.countsOf(k)
		second, _, err := r.pageItems(ctx, s, k)
		if err != nil || second.absent {
			counts.SecondConnection = "failed: listing"
			continue
		}
		state, fs := checkToolsetStable(k, l.keys(), second.keys())
		counts.SecondConnection = state
		r.emitFrom(second.first(), fs...)
	}
}
