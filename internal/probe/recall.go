package probe

import (
	"context"

	"github.com/driftd/driftd/internal/mcp"
)

// Recall is what a target's last run concluded from its tools listing,
// for a caller that keeps it between runs (a daemon; Report.Recall gives
// the next): the one page it was answered with, and that the listing's
// checks found nothing in it — conformance, posture, drift against the
// declared manifest, the second connection's listing. A run answered
// those bytes again, to the same request, on both connections, concludes
// the same without decoding them: on a fleet of healthy distinct
// servers, decoding a listing each run was the daemon's largest cost
// (docs/scaling.md). The zero Recall recalls nothing.
//
// The caller vouches that nothing else the conclusion rests on changed:
// the target's configuration and its declared manifest (a daemon drops
// the Recall when either does).
type Recall struct {
	Page  mcp.Known
	Tools int // the tools the page served
}

// IsZero reports a Recall that recalls nothing.
func (c Recall) IsZero() bool { return c.Page == (mcp.Known{}) }

// known is the answer a listing of the run may leave unread, nil for none.
func (r *run) known() *mcp.Known {
	if r.recall.IsZero() {
		return nil
	}
	return &r.recall.Page
}

// recalled reports whether the main listing is the last run's, unread,
// and nothing else the run does needs its tools: then the listing's
// checks are not run again (their conclusion is the Recall's). The run
// reads the listing when it lists other kinds (the posture scan of
// their texts knows the tools' names) or compares an anonymous listing
// with it.
func (r *run) recalled(s *mcp.Session, l *listing) bool {
	if l.unread == nil {
		return false
	}
	anonymousList := r.rep.AuthorizationPresented && !r.t.SkipAuthProbe
	return !anonymousList && len(r.itemKindsToList(s)) == 0
}

// read decodes a listing its fetch left unread (Session.ListToolsKnown)
// and parses it like like (see parseLike); it is a no-op for one that
// was read.
func (l *listing) read(like *listing) error {
	if l.unread == nil {
		return nil
	}
	p, err := l.session.Read(l.unread, like == nil)
	l.unread, l.pages, l.pageEx = nil, 0, nil
	if err != nil {
		l.failedEx = p.Exchange
		return err
	}
	l.add(p)
	l.parseLike(like)
	return nil
}

// quietly runs step, a check of the listing, and notes whether it found
// anything: a listing some check found something in is not recalled.
func (r *run) quietly(step func()) {
	n := len(r.findings)
	step()
	r.listingLoud = r.listingLoud || len(r.findings) != n
}

// nextRecall sets the report's Recall from a successful run's listing l:
// one page, answered as JSON, in which no check found anything, and
// which the second connection was served alike. A recalled listing
// recalls itself.
func (r *run) nextRecall(ctx context.Context, l *listing) {
	if !r.recallable || r.listingLoud || !r.rep.Success || ctx.Err() != nil || l == nil ||
		l.pages != 1 || l.capped || l.loop || r.rep.Tools.SecondConnection != "same" {
		return
	}
	if a := l.pageEx[0].Answer; a != (mcp.Known{}) {
		r.rep.recall = Recall{Page: a, Tools: r.rep.Tools.Served}
	}
}

// Recall is what the next run of the target may take this run's listing
// to have concluded (see Recall); zero when it may not.
func (r *Report) Recall() Recall { return r.recall }

// ServedAsBefore reports a run whose listing was the last run's, unread
// (Recall): Served is then nil, and the served set is the last one.
func (r *Report) ServedAsBefore() bool { return r.servedAsBefore }
