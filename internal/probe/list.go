package probe

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// listing is the outcome of paging through tools/list once.
type listing struct {
	raw    []json.RawMessage
	tools  []mcp.Tool // those with a usable name, in served order
	pages  int
	capped bool
	// pageEx are the pages' exchanges; toolPage[i] is the page of tools[i].
	pageEx   []*mcp.Exchange
	rawPage  []int
	toolPage []int
}

// exchangeOf returns the exchange a tool was listed in, or the first
// page's for a tool not served (nil when nothing was listed).
func (l *listing) exchangeOf(name string) *mcp.Exchange {
	for i, t := range l.tools {
		if t.Name == name {
			return l.pageEx[l.toolPage[i]]
		}
	}
	if len(l.pageEx) > 0 {
		return l.pageEx[0]
	}
	return nil
}

func (l *listing) names() []string {
	out := make([]string, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.Name
	}
	return out
}

// listAll pages through tools/list up to the page cap, stopping on a
// repeated cursor. primary listings emit conformance findings and, on
// failure, fail the run.
func (r *run) listAll(ctx context.Context, s *mcp.Session, primary bool) (*listing, bool) {
	l, err := r.page(ctx, s, primary)
	if err != nil {
		if primary {
			r.failErr(err)
		}
		return l, false
	}
	return l, true
}

func (r *run) page(ctx context.Context, s *mcp.Session, primary bool) (*listing, error) {
	l := &listing{}
	seen := map[string]bool{}
	cursor := ""
	for {
		p, err := s.ListTools(ctx, cursor)
		if err != nil {
			if primary {
				r.evidence = p.Exchange
			}
			return l, err
		}
		l.pages++
		l.pageEx = append(l.pageEx, p.Exchange)
		for range p.Tools {
			l.rawPage = append(l.rawPage, l.pages-1)
		}
		if primary {
			r.evidence = p.Exchange
		}
		if primary && s.Era == mcp.EraModern {
			r.conformResult(fmt.Sprintf("tools/list page %d", l.pages), p.ResultMeta, true)
		}
		l.raw = append(l.raw, p.Tools...)
		if len(l.raw) > MaxTools {
			return l, &mcp.Error{Reason: mcp.ReasonResponseTooLarge, Method: "tools/list",
				Detail: fmt.Sprintf("more than %d tools served", MaxTools)}
		}
		if !p.HasNext || p.NextCursor == "" {
			break
		}
		if seen[p.NextCursor] || p.NextCursor == cursor {
			if primary {
				r.emit(catalogue.New(catalogue.ConfPaginationLoop, "",
					fmt.Sprintf("tools/list page %d returned a nextCursor already seen; paging stopped", l.pages)))
			}
			break
		}
		seen[p.NextCursor] = true
		if l.pages >= r.t.MaxListPages {
			l.capped = true
			if primary {
				r.rep.Tools.PageCapReached = true
				r.emit(catalogue.New(catalogue.DriftPaginationCapped, "",
					fmt.Sprintf("stopped after max_list_pages=%d pages with more to come; missing-tool findings are suppressed", r.t.MaxListPages)))
			}
			break
		}
		cursor = p.NextCursor
	}
	if primary {
		r.rep.Tools.Pages = l.pages
	}
	for i, raw := range l.raw {
		t, err := mcp.ParseTool(raw)
		if err != nil {
			if primary {
				r.evidence = l.pageEx[l.rawPage[i]]
				r.emit(catalogue.New(catalogue.ConfToolName, "",
					fmt.Sprintf("served tools[%d] has no \"name\" string", i)))
			}
			continue
		}
		l.tools = append(l.tools, t)
		l.toolPage = append(l.toolPage, l.rawPage[i])
	}
	return l, nil
}
