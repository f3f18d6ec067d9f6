package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/driftd/driftd/internal/mcp"
)

// listing is the outcome of paging through tools/list once: what was
// served and the page exchange each part of it was read from.
type listing struct {
	raw []json.RawMessage
	// parsed[i] is raw[i] as mcp.ParseTool reads it (the decode's own
	// pass read it), an empty Name for a definition without a usable one.
	parsed []mcp.Tool
	tools  []mcp.Tool // those with a usable name, in served order
	pages  int
	capped bool
	// loop is set when a page repeated a cursor and paging stopped there.
	loop bool
	// pageEx and meta are the pages' exchanges and result members;
	// rawPage[i] is the page of raw[i], toolPage[i] the page of tools[i].
	pageEx   []*mcp.Exchange
	meta     []mcp.ResultMeta
	rawPage  []int
	toolPage []int
	// unnamed are the indices into raw of definitions without a usable name.
	unnamed []int
	// pageOf maps a tool name to the page it was first listed in, so that
	// evidence lookup costs one map read however many tools were served.
	pageOf map[string]int
	// failedEx is the exchange that ended the listing with an error.
	failedEx *mcp.Exchange
	// unread is the one page of a listing that was the answer its fetch
	// knew (Recall), left unread until read; session is the listing's.
	unread  *mcp.ListPage
	session *mcp.Session
}

// exchangeOf returns the exchange a tool was first listed in, or the
// first page's for a tool not served (nil when nothing was listed).
func (l *listing) exchangeOf(name string) *mcp.Exchange {
	if p, ok := l.pageOf[name]; ok {
		return l.pageEx[p]
	}
	return l.first()
}

// first returns the first page's exchange, nil when nothing was listed.
func (l *listing) first() *mcp.Exchange {
	if len(l.pageEx) == 0 {
		return nil
	}
	return l.pageEx[0]
}

// last returns the last listed page's exchange, nil when nothing was listed.
func (l *listing) last() *mcp.Exchange {
	if len(l.pageEx) == 0 {
		return nil
	}
	return l.pageEx[len(l.pageEx)-1]
}

// toolExchange returns the exchange of the page tools[i] was listed in.
func (l *listing) toolExchange(i int) *mcp.Exchange { return l.pageEx[l.toolPage[i]] }

// rawExchange returns the exchange of the page raw[i] was listed in.
func (l *listing) rawExchange(i int) *mcp.Exchange { return l.pageEx[l.rawPage[i]] }

// tool returns the first served tool named name.
func (l *listing) tool(name string) (mcp.Tool, bool) {
	for _, t := range l.tools {
		if t.Name == name {
			return t, true
		}
	}
	return mcp.Tool{}, false
}

func (l *listing) names() []string {
	out := make([]string, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.Name
	}
	return out
}

// listPrimary lists the tools of the run's main session, emits what the
// listing shows and, on failure, fails the run.
func (r *run) listPrimary(ctx context.Context, s *mcp.Session) (*listing, bool) {
	l, err := r.page(ctx, s, nil, r.known(s))
	if err == nil && !r.recalled(s, l) {
		err = l.read(nil)
	}
	if l.unread != nil {
		// The last run's answer (Recall): its checks would find what
		// they found then, against the same manifest, which is neither
		// awaited nor read.
		r.rep.Tools.Pages = 1
		r.recallFindings(l)
		return l, true
	}
	// A manifest read beside the run (Prepared.Pending) is first needed
	// by the listing's checks, so it is awaited only now: the server
	// answers tools/list while it is read. It is awaited whatever the
	// listing's outcome, so a failed run reports what it was compared
	// against, and an unreadable manifest fails it first, as before.
	var served []mcp.Tool
	if l != nil {
		served = l.tools
	}
	if !r.awaitManifest(ctx, served) {
		return l, false
	}
	r.fromListing(func() {
		r.conformListing(ctx, l, s.Era == mcp.EraModern)
		r.emitFrom(l.last(), checkPaginationCapped(mcp.KindTool, l.capped, r.t.MaxListPages)...)
	})
	r.rep.Tools.PageCapReached = l.capped
	if err != nil {
		r.failErr(l.failedEx, err)
		return l, false
	}
	r.rep.Tools.Pages = l.pages
	return l, true
}

// page pages through tools/list up to the page cap, stopping on a repeated
// cursor. It emits nothing: the listing records what the checks read. like,
// if set, is a listing this one is expected to repeat (parseLike); known,
// if set, an answer its first page may be left unread as (fetch).
func (r *run) page(ctx context.Context, s *mcp.Session, like *listing, known *mcp.Known) (*listing, error) {
	l, err := r.fetch(ctx, s, like != nil, known) // compared with like's first; parsed only if it differs
	if err != nil || l.unread != nil {
		return l, err
	}
	l.parseLike(like)
	return l, nil
}

// fetch reads the pages of page, the definitions parsed as they are read
// unless raw (then parseLike parses them, or takes another listing's). A
// first page that is the answer known (Recall) is left unread, and is
// the whole listing: those bytes had no next page.
func (r *run) fetch(ctx context.Context, s *mcp.Session, raw bool, known *mcp.Known) (*listing, error) {
	l := &listing{session: s}
	cur := cursors{seen: map[string]bool{}}
	for {
		var p *mcp.ListPage
		var err error
		switch {
		case known != nil && l.pages == 0:
			p, err = s.ListToolsKnown(ctx, cur.at, *known, !raw)
		case raw:
			p, err = s.ListToolsRaw(ctx, cur.at)
		default:
			p, err = s.ListTools(ctx, cur.at)
		}
		if err != nil {
			l.failedEx = p.Exchange
			return l, err
		}
		if p.Exchange.Unread {
			l.pages, l.pageEx, l.unread = 1, []*mcp.Exchange{p.Exchange}, p
			return l, nil
		}
		l.add(p)
		if len(l.raw) > MaxTools {
			l.failedEx = p.Exchange
			return l, &mcp.Error{Reason: mcp.ReasonResponseTooLarge, Method: "tools/list",
				Detail: fmt.Sprintf("more than %d tools served", MaxTools)}
		}
		var more bool
		if more, l.loop, l.capped = cur.advance(p.HasNext, p.NextCursor, l.pages, r.t.MaxListPages); !more {
			return l, nil
		}
	}
}

// add appends a page read to the listing.
func (l *listing) add(p *mcp.ListPage) {
	l.pages++
	l.pageEx = append(l.pageEx, p.Exchange)
	l.meta = append(l.meta, p.ResultMeta)
	for range p.Tools {
		l.rawPage = append(l.rawPage, l.pages-1)
	}
	l.raw = append(l.raw, p.Tools...)
	l.parsed = append(l.parsed, p.Parsed...)
}

// cursors follows nextCursor through one listing, tools or items.
type cursors struct {
	seen map[string]bool
	at   string // the cursor of the page last asked for ("" for the first)
}

// advance says, after a page whose result said hasNext and next and with
// pages read so far, whether to ask for another page (at c.at), and if
// not whether a cursor came round again (loop) or the page cap stopped it
// (capped); a list that simply ended is neither.
func (c *cursors) advance(hasNext bool, next string, pages, maxPages int) (more, loop, capped bool) {
	switch {
	case !hasNext || next == "":
		return false, false, false
	case c.seen[next] || next == c.at:
		return false, true, false
	case pages >= maxPages:
		return false, false, true
	}
	c.seen[next], c.at = true, next
	return true, false, false
}

// parse reads the raw definitions and indexes the tools by name.
func (l *listing) parse() {
	l.pageOf = make(map[string]int, len(l.raw))
	l.tools = make([]mcp.Tool, 0, len(l.raw))
	l.toolPage = make([]int, 0, len(l.raw))
	defer func() { l.parsed = nil }() // l.tools has them: not two copies for the run
	for i, raw := range l.raw {
		var t mcp.Tool
		if len(l.parsed) == len(l.raw) { // read with the page
			t = l.parsed[i]
		} else {
			t, _ = mcp.ParseTool(raw)
		}
		if t.Name == "" {
			l.unnamed = append(l.unnamed, i)
			continue
		}
		l.tools = append(l.tools, t)
		l.toolPage = append(l.toolPage, l.rawPage[i])
		if _, dup := l.pageOf[t.Name]; !dup {
			l.pageOf[t.Name] = l.rawPage[i]
		}
	}
}

// parseLike is parse for a listing expected to repeat like's, as a second
// connection's does: when every definition is byte-identical to like's,
// the tools are like's (shared, read-only) and nothing is decoded again.
func (l *listing) parseLike(like *listing) {
	if like == nil || !slices.EqualFunc(l.raw, like.raw, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		l.parse()
		return
	}
	l.tools, l.unnamed = like.tools, like.unnamed
	l.toolPage = make([]int, 0, len(l.tools))
	l.pageOf = make(map[string]int, len(l.tools))
	for i, u := 0, 0; i < len(l.raw); i++ {
		if u < len(l.unnamed) && l.unnamed[u] == i {
			u++
			continue
		}
		name := l.tools[len(l.toolPage)].Name
		l.toolPage = append(l.toolPage, l.rawPage[i])
		if _, dup := l.pageOf[name]; !dup {
			l.pageOf[name] = l.rawPage[i]
		}
	}
}
