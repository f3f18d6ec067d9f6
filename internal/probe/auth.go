package probe

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// authPosture finds out whether the server lists tools without
// credentials. The evidence is the anonymous request's outcome, or the
// main listing when the run presented no credentials at all.
func (r *run) authPosture(ctx context.Context, like *mcp.Session, served *listing) {
	ap := &r.rep.AuthPosture
	if !r.rep.AuthorizationPresented {
		ap.AnonymousList = "served"
		r.emitFrom(served.first(), r.checkAnonymousList("tools/list answered a request that carried no credentials")...)
		return
	}
	if r.t.SkipAuthProbe {
		ap.AnonymousList = "skipped"
		return
	}
	c, err := r.client(true, true, &r.lastAnon)
	if err != nil {
		ap.AnonymousList = "indeterminate"
		r.emitFrom(nil, r.checkIndeterminate(err)...) // nothing was sent
		return
	}
	defer c.CloseIdleConnections()
	s, err := c.Open(ctx, like)
	var anon *listing
	if err == nil {
		defer s.Close(ctx)
		anon, err = r.page(ctx, s, served, nil)
	}
	var me *mcp.Error
	switch {
	case err == nil:
		ap.AnonymousList = "served"
		equal := sameSet(anon.names(), served.names())
		ap.AnonymousToolsEqual = &equal
		what := "the same tool set"
		if !equal {
			what = fmt.Sprintf("%d tools where the authenticated list has %d", len(anon.tools), len(served.tools))
		}
		r.emitFrom(anon.first(), r.checkAnonymousList(fmt.Sprintf("tools/list without the configured credentials (%v stripped) answered with %s",
			r.rep.AuthorizationHeaders, what))...)
	case errors.As(err, &me) && me.Reason == mcp.ReasonAuthRequired:
		ap.AnonymousList = "refused"
		ap.Challenge = me.Challenge
		r.emitFrom(r.lastAnon, r.checkRefusal(me.Challenge, "tools/list without the configured credentials")...)
		r.authSurface(ctx, me.Challenge, r.lastAnon, c.HTTPClient())
	default:
		ap.AnonymousList = "indeterminate"
		r.emitFrom(r.lastAnon, r.checkIndeterminate(err)...)
	}
}

// checkAnonymousList reports MCP-AUTH-ANONYMOUS-LIST graded by
// classification.
func (r *run) checkAnonymousList(observed string) []catalogue.Finding {
	cl := r.rep.Classification
	f := catalogue.New(catalogue.AuthAnonymousList, "", fmt.Sprintf("%s (classification %s: %s)", observed, cl.Class, cl.Reason))
	switch cl.Class {
	case "local":
		f.Severity = catalogue.Info
	case "production":
		f.Severity = catalogue.Error
	default:
		f.Severity = catalogue.Warn
	}
	f.Classification = cl.Class
	return one(f)
}

// checkRefusal reports MCP-AUTH-ENFORCED, and MCP-AUTH-NO-CHALLENGE
// without a WWW-Authenticate header.
func (r *run) checkRefusal(ch *mcp.Challenge, what string) []catalogue.Finding {
	cl := r.rep.Classification
	status := 0
	if ch != nil {
		status = ch.Status
	}
	out := one(catalogue.New(catalogue.AuthEnforced, "",
		fmt.Sprintf("%s was refused with HTTP %d (classification %s: %s)", what, status, cl.Class, cl.Reason)))
	if ch == nil || !ch.WWWAuthenticate {
		out = append(out, catalogue.New(catalogue.AuthNoChallenge, "",
			fmt.Sprintf("the HTTP %d refusal carried no WWW-Authenticate challenge, so clients cannot discover how to authenticate", status)))
	}
	return r.classified(out)
}

func (r *run) checkIndeterminate(err error) []catalogue.Finding {
	cl := r.rep.Classification
	return r.classified(one(catalogue.New(catalogue.AuthIndeterminate, "",
		fmt.Sprintf("tools/list without the configured credentials failed with %s, which is not evidence of enforcement (classification %s: %s)",
			mcp.Classify(err), cl.Class, cl.Reason))))
}

// classified stamps the target's classification on auth findings.
func (r *run) classified(fs []catalogue.Finding) []catalogue.Finding {
	for i := range fs {
		fs[i].Classification = r.rep.Classification.Class
	}
	return fs
}

// checkPlaintextTransport reports MCP-AUTH-PLAINTEXT-TRANSPORT for
// http:// endpoints that are not local.
func (r *run) checkPlaintextTransport() []catalogue.Finding {
	u, err := url.Parse(r.t.URL)
	cl := r.rep.Classification
	if err != nil || u.Scheme != "http" || cl.Class == "local" {
		return nil
	}
	msg := fmt.Sprintf("the endpoint is plain http:// (classification %s: %s)", cl.Class, cl.Reason)
	if r.rep.AuthorizationPresented {
		msg += "; configured credentials travel unencrypted"
	}
	f := catalogue.New(catalogue.AuthPlaintextTransport, "", msg)
	if cl.Class == "production" {
		f.Severity = catalogue.Error
	}
	return r.classified(one(f))
}
