package probe

import (
	"slices"
	"unsafe"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// Recall is what a target's last run concluded from its tools listing,
// for a caller that keeps it between runs (a daemon; Report.Recall gives
// the next): the one page it was answered with, and what the listing's
// checks found in it — conformance, posture, drift against the declared
// manifest — the second connection having been served it alike. A run
// answered those bytes again, to the same request, on both connections,
// concludes the same without decoding them: on a fleet of distinct
// servers, decoding a listing each run was the daemon's largest cost
// (docs/scaling.md). The zero Recall recalls nothing.
//
// The caller vouches that nothing else the conclusion rests on changed:
// the target's configuration and its declared manifest (a daemon drops
// the Recall when either does). Like a run that finds its listing served
// as declared (manifest.Served), a recalled run does not read the
// manifest file: what it knows of it is the file's size, time and hash.
type Recall struct {
	Page  mcp.Known
	Tools int // the tools the page served
	// Era and Version are the session's the page was answered in: the
	// listing's checks differ by era (a modern page's result members,
	// x-mcp-header annotations), so only a session of both recalls it.
	Era     mcp.Era
	Version string
	// Findings are what the listing's checks found, as they emitted them:
	// before the run's de-duplication, scrub and policy, without the
	// span of their evidence (a recalled run emits them again, against
	// its own page and findings).
	Findings []catalogue.Finding
}

// maxRecalledFindings and maxRecalledBytes bound what a Recall keeps: a
// listing whose checks found more is decoded every run, so what a target
// keeps between runs stays small whatever a server serves (the texts
// are not yet clipped by the scrub).
const (
	maxRecalledFindings = 64
	maxRecalledBytes    = 32 << 10
)

// IsZero reports a Recall that recalls nothing.
func (c Recall) IsZero() bool { return c.Page == (mcp.Known{}) }

// known is the answer a listing of the run in session s may leave
// unread, nil for none.
func (r *run) known(s *mcp.Session) *mcp.Known {
	if r.recall.IsZero() || s.Era != r.recall.Era || s.Version != r.recall.Version {
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

// fromListing runs step, a check of the listing, and keeps what it
// emits for the next run's Recall (emitFrom), before the run's
// de-duplication: a finding that an earlier one of the same identity
// hid this run may not be hidden in the next.
func (r *run) fromListing(step func()) {
	r.capturing = true
	defer func() { r.capturing = false }()
	step()
}

// recallFindings emits what the recalled listing's checks found, each
// with the exchange of the page this run was served, and keeps them for
// the next run's Recall.
func (r *run) recallFindings(l *listing) {
	r.emitFrom(l.first(), r.recall.Findings...)
	r.listingFound = slices.Clip(r.recall.Findings)
}

// recalledBytes is what findings weigh in a Recall.
func recalledBytes(fs []catalogue.Finding) int {
	w := len(fs) * int(unsafe.Sizeof(catalogue.Finding{}))
	for _, f := range fs {
		w += len(f.Tool) + len(f.Kind) + len(f.Direction) + len(f.Pointer) + len(f.Change) + len(f.Grade) + len(f.Classification) + len(f.Message)
	}
	return w
}

// nextRecall sets the report's Recall from the run's listing l: one page,
// answered as JSON, which the second connection was served alike, and at
// most maxRecalledFindings and maxRecalledBytes found in it. A recalled
// listing recalls itself. A run that fails, however late (its deadline
// passing after its checks), gives none: Report.Recall says so.
func (r *run) nextRecall(l *listing) {
	if !r.recallable || l == nil || l.session == nil ||
		len(r.listingFound) > maxRecalledFindings || recalledBytes(r.listingFound) > maxRecalledBytes ||
		l.pages != 1 || l.capped || l.loop || r.rep.Tools.SecondConnection != "same" {
		return
	}
	if a := l.pageEx[0].Answer; a != (mcp.Known{}) {
		r.rep.recall = Recall{Page: a, Tools: r.rep.Tools.Served, Era: l.session.Era, Version: l.session.Version, Findings: r.listingFound}
	}
}

// Recall is what the next run of the target may take this run's listing
// to have concluded (see Recall); zero when it may not, and always for a
// failed run.
func (r *Report) Recall() Recall {
	if !r.Success {
		return Recall{}
	}
	return r.recall
}

// ServedAsBefore reports a run whose listing was the last run's, unread
// (Recall): Served is then nil, and the served set is the last one.
func (r *Report) ServedAsBefore() bool { return r.servedAsBefore }
