package probe

import (
	"context"
	"errors"
	"net/http"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/sanitize"
)

// withOAuth returns hc presenting the target's machine identity
// (docs/authentication.md): the same connection, through an
// oauth.Transport whose discovery and token requests go through an
// anonymous client of the target's TLS and proxy settings.
func (r *run) withOAuth(hc *http.Client) *http.Client {
	t := &oauth.Transport{
		Base: hc.Transport,
		Anonymous: func() (*http.Client, error) {
			return NewHTTPClient(config.Anonymous(r.t.HTTPClient.HTTPClientConfig), r.opts.Version, 0)
		},
		Tokens:   r.opts.Tokens,
		OAuth:    &r.t.OAuth,
		Endpoint: r.t.URL,
	}
	if l := r.t.OAuth.Login; l != nil {
		t.Session = &oauth.SessionSource{Target: r.t.Name, Provided: l.SessionFile, Own: l.StateFile, Login: r.opts.Login}
	}
	r.oauthClose = append(r.oauthClose, t.CloseAnonymous)
	return &http.Client{Transport: t, CheckRedirect: hc.CheckRedirect, Timeout: hc.Timeout, Jar: hc.Jar}
}

// oauthDone closes what the machine identity opened, and records what it
// did in the report: the token requests, the token's times, and why no
// token could be had; every token it presented, and every credential it
// sent in a derived form (UsageReport.Tokens), is redacted from what the
// servers sent back.
func (r *run) oauthDone() {
	for _, c := range r.oauthClose {
		c()
	}
	if r.usage == nil {
		return
	}
	u := r.usage.Report()
	r.secrets = r.secrets.With(u.Tokens...)
	use := &OAuthUse{Issuer: config.RedactedURL(u.Issuer), Grant: u.Grant, ClientAuth: u.Method, Scheme: u.Scheme,
		TokenRequests: u.Requests}
	if use.TokenRequests == nil {
		use.TokenRequests = []string{}
	}
	if !u.Issued.IsZero() {
		issued, expires := u.Issued.UTC(), u.Expires.UTC()
		use.TokenIssuedAt, use.TokenExpiresAt = &issued, &expires
	}
	for _, n := range u.Notes {
		r.log.Warn("oauth", "note", sanitize.Text(r.secrets.Redact(n)))
	}
	if r.t.OAuth.Login != nil {
		use.LoginRequired = new(bool)
	}
	if u.Err != nil {
		use.Error = sanitize.Text(r.secrets.Redact(u.Err.Error()))
		var lr *oauth.LoginRequiredError
		if errors.As(u.Err, &lr) && use.LoginRequired != nil {
			*use.LoginRequired = true
		}
		if !r.rep.Success && r.rep.FailureReason == mcp.ReasonAuthRequired {
			what := "the machine identity got no token: "
			if r.t.OAuth.Login != nil {
				what = "the login session cannot serve: "
			}
			r.rep.FailureMessage += "; " + what + use.Error
			if errors.Is(u.Err, context.DeadlineExceeded) {
				// The run's deadline passed while the authorization
				// server kept it waiting: nothing was refused.
				r.rep.FailureReason = mcp.ReasonTimeout
			}
		}
	}
	r.rep.AuthPosture.OAuth = use
}
