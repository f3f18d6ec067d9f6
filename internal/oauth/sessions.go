package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/driftd/driftd/internal/config"
)

// LoginRequiredError says a target's session cannot serve and a person
// must log in again.
type LoginRequiredError struct {
	Target, Why string
}

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("%s: run `driftd auth login %s`", e.Why, e.Target)
}

// SessionSource is where a login target's session comes from.
type SessionSource struct {
	Target string
	// Provided is a session file the operator provides, perhaps read
	// only (a mounted Secret); "" for none.
	Provided string
	// Own is driftd's copy, which logins and refreshes write; "" keeps
	// the session in memory only.
	Own string
	// Login, if set, logs in again when the session cannot serve, or a
	// server asks for more scopes: driftd check --oauth.login. nil in the
	// daemon: its target then fails with LoginRequiredError.
	Login func(ctx context.Context, more []string) (*Session, error)
}

// KeepSession makes s the session of src's target in the cache: one a
// command just logged into, held in memory only when src has no file.
func (ts *Tokens) KeepSession(src *SessionSource, s *Session) {
	e := ts.entry(src.key())
	e.mu.Lock()
	defer e.mu.Unlock()
	e.session, e.tok = s, nil
}

// maxStepUps bounds the logins a 403 insufficient_scope may cause in one
// conversation.
const maxStepUps = 2

// key names the session's entry in the cache.
func (src *SessionSource) key() string {
	if src.Own != "" {
		return "session\x00" + src.Own
	}
	return "session\x00" + src.Provided + "\x00" + src.Target
}

func (src *SessionSource) required(why string) error {
	return &LoginRequiredError{Target: src.Target, Why: why}
}

// sessionToken returns a fresh access token of the session: the cached
// one, the session file's, or a refreshed one (RFC 6749 §6, with the
// resource parameter, DPoP-bound like the session); stale is a token a
// server just refused.
func (t *Transport) sessionToken(ctx context.Context, stale string) (*token, error) {
	src, ts, u := t.Session, t.Tokens, usageOf(ctx)
	e := ts.entry(src.key())
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.cached(ts.now(), stale, u); t != nil {
		return t, nil
	}
	s := e.session
	if src.Provided != "" || src.Own != "" {
		disk, err := LoadSession(src.Provided, src.Own)
		switch {
		case errors.Is(err, ErrNoSession) && s == nil:
			return nil, src.required("no session: nobody has logged in to this target")
		case err != nil && s == nil:
			return nil, err
		case err == nil && (s == nil || disk.UpdatedAt.After(s.UpdatedAt)):
			s = disk
		}
	}
	if s == nil {
		return nil, src.required("no session")
	}
	e.session = s
	u.secret(s.RefreshToken)
	key, err := s.dpopSigner()
	if err != nil {
		return nil, fmt.Errorf("the session's DPoP key: %v", err)
	}
	if s.AccessToken != "" && s.AccessToken != stale {
		if tok := s.token(key); tok.fresh(ts.now()) {
			e.tok = tok
			c := *tok
			u.use(&c, false)
			return &c, nil
		}
	}
	if s.RefreshToken == "" {
		return nil, src.required("the session's access token has expired and the authorization server issued no refresh token")
	}
	next, err := t.refresh(ctx, s, key)
	if err != nil {
		return nil, err
	}
	e.session = next
	if src.Own != "" {
		if err := next.Save(src.Own); err != nil {
			u.note(fmt.Sprintf("the refreshed session could not be saved: %v", err))
		}
	}
	tok := next.token(key)
	e.tok = tok
	c := *tok
	u.use(&c, true)
	return &c, nil
}

// refresh sends the refresh token grant through x/oauth2's client
// credentials flow with its grant_type overridden, so that the resource
// parameter goes with it.
func (t *Transport) refresh(ctx context.Context, s *Session, key *signer) (*Session, error) {
	src, u := t.Session, usageOf(ctx)
	if err := tokenEndpointAllowed(s.TokenEndpoint); err != nil {
		return nil, err
	}
	secret := s.ClientSecret
	if s.Registration == RegistrationPre && t.OAuth.ClientSecretFile != "" {
		var err error
		if secret, err = readSecret(t.OAuth.ClientSecretFile, "oauth.client_secret_file"); err != nil {
			u.requested("failed")
			return nil, err
		}
	}
	cc := &clientcredentials.Config{ClientID: s.ClientID, ClientSecret: secret, TokenURL: s.TokenEndpoint, AuthStyle: authStyle(s.ClientAuth),
		EndpointParams: url.Values{"grant_type": {"refresh_token"}, "refresh_token": {s.RefreshToken}, "resource": {s.Resource}}}
	anon, err := t.client()
	if err != nil {
		return nil, err
	}
	hc := anon
	if key != nil {
		hc = dpopClient(anon.Transport, key, t.Tokens)
	}
	u.identify(s.Issuer, s.ClientAuth, "refresh_token")
	tok, rerr := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	g := &grant{usage: u}
	if err := g.outcome(ctx, rerr, s.TokenEndpoint, "refresh_token"); err != nil {
		var re *oauth2.RetrieveError
		if errors.As(rerr, &re) && re.ErrorCode == "invalid_grant" {
			return nil, src.required("the authorization server refused the session's refresh token (invalid_grant): it expired or was revoked")
		}
		return nil, err
	}
	if err := knownType(tok.TokenType); err != nil {
		return nil, err
	}
	next := *s
	now := t.Tokens.now().UTC()
	next.AccessToken, next.TokenType, next.Expiry = tok.AccessToken, tok.TokenType, expiresAt(now, tok)
	if tok.RefreshToken != "" {
		next.RefreshToken = tok.RefreshToken // rotated (OAuth 2.1 §4.3.1)
	}
	next.UpdatedAt = now
	return &next, nil
}

// relogin logs in again through the session source's Login and keeps the
// new session. One login at a time per session: a conversation's
// connections refused together wait for the first's login and use it
// (stale is the token the caller saw refused, "" for none), unless more
// scopes are asked for.
func (t *Transport) relogin(ctx context.Context, more []string, stale string) (*token, error) {
	src, ts, u := t.Session, t.Tokens, usageOf(ctx)
	e := ts.entry(src.key())
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(more) == 0 {
		if tok := e.cached(ts.now(), stale, u); tok != nil {
			return tok, nil
		}
	}
	s, err := src.Login(ctx, more)
	if err != nil {
		return nil, err
	}
	if src.Own != "" {
		if err := s.Save(src.Own); err != nil {
			u.note(fmt.Sprintf("the session could not be saved: %v", err))
		}
	}
	key, err := s.dpopSigner()
	if err != nil {
		return nil, err
	}
	tok := s.token(key)
	e.session, e.tok = s, tok
	u.identify(s.Issuer, s.ClientAuth, "authorization_code")
	c := *tok
	u.use(&c, true)
	return &c, nil
}

// roundTripSession is RoundTrip for a login target.
func (t *Transport) roundTripSession(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	u := usageOf(ctx)
	tok, err := t.sessionToken(ctx, "")
	var lr *LoginRequiredError
	if errors.As(err, &lr) && t.Session.Login != nil {
		tok, err = t.relogin(ctx, nil, "")
	}
	if err != nil {
		u.fail(err)
		tok = nil
	}
	resp, err := t.send(req, tok, 0)
	refreshed, nonced, stepUps := tok == nil, false, 0
	for err == nil {
		chs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		var aerr error
		switch {
		case tok != nil && tok.scheme == "DPoP" && !nonced && resp.StatusCode == http.StatusUnauthorized &&
			challengeError(chs, "dpop") == "use_dpop_nonce" && validNonce(resp.Header.Get("DPoP-Nonce")):
			nonced = true
			t.Tokens.setNonce(origin(req.URL), resp.Header.Get("DPoP-Nonce"))
		case resp.StatusCode == http.StatusUnauthorized && !refreshed:
			refreshed = true
			resp = keepRefusal(resp)
			refused := tok.value
			if moved := t.moved(ctx, chs, tok.issuer); moved != "" {
				aerr = t.Session.required(moved)
			} else {
				tok, aerr = t.sessionToken(ctx, refused)
			}
			if errors.As(aerr, &lr) && t.Session.Login != nil {
				tok, aerr = t.relogin(ctx, nil, refused)
			}
		case resp.StatusCode == http.StatusForbidden && tok != nil && challengeError(chs, "") == "insufficient_scope":
			more := strings.Fields(challengeParam(chs, "scope"))
			if t.Session.Login == nil || stepUps == maxStepUps || len(more) == 0 {
				u.fail(t.Session.required(fmt.Sprintf("the server asks for scopes the session lacks (%s)", scopeList(more))))
				return resp, nil
			}
			stepUps++
			resp = keepRefusal(resp)
			tok, aerr = t.relogin(ctx, more, "")
		default:
			return resp, nil
		}
		if aerr != nil {
			u.fail(aerr)
			return resp, nil
		}
		drop(resp)
		if req.Body != nil && req.GetBody == nil {
			return nil, errors.New("oauth: the request cannot be sent again")
		}
		resp, err = t.send(req, tok, 1)
	}
	return resp, err
}

// moved reports, after a refusal of a session's token, whether the
// server now names another authorization server than the session's
// (SEP-2352: a client must register again there, never reuse its
// credentials): why, or "" when it does not.
func (t *Transport) moved(ctx context.Context, chs []oauthex.Challenge, issuer string) string {
	if issuer == "" {
		return ""
	}
	anon, err := t.client()
	if err != nil {
		return ""
	}
	ep, err := url.Parse(t.Endpoint)
	if err != nil {
		return ""
	}
	u := usageOf(ctx)
	var maxDoc int64
	if u != nil {
		maxDoc = u.MaxDocumentBytes
	}
	d := discover(ctx, anon, ep, challengeParam(chs, "resource_metadata"), t.OAuth.Issuer, nil, maxDoc)
	if d.PRM == nil || d.PRMProblem != "" || !d.ResourceMatches || slices.Contains(d.PRM.AuthorizationServers, issuer) {
		return ""
	}
	return fmt.Sprintf("the server now names another authorization server than the session's %s", redact(issuer))
}

// token is the session's access token as presented, bound to key.
func (s *Session) token(key *signer) *token {
	t := &token{value: s.AccessToken, scheme: scheme(s.TokenType, key), issued: s.UpdatedAt, expires: s.Expiry, key: key, issuer: s.Issuer}
	if s.Expiry.IsZero() {
		t.expires = s.UpdatedAt.Add(defaultLifetime)
	}
	return t
}

// scheme is how a token of type typ is presented.
func scheme(typ string, key *signer) string {
	if key != nil && strings.EqualFold(typ, "DPoP") {
		return "DPoP"
	}
	return "Bearer"
}

func scopeList(s []string) string {
	if len(s) == 0 {
		return "none named"
	}
	return strings.Join(s, " ")
}

// Revoke revokes the session's refresh token (else its access token) at
// the authorization server's revocation endpoint (RFC 7009), and reports
// whether there was one to ask.
func Revoke(ctx context.Context, anon *http.Client, s *Session, cfg *config.OAuth) (bool, error) {
	if s.RevocationEndpoint == "" {
		return false, nil
	}
	if err := tokenEndpointAllowed(s.RevocationEndpoint); err != nil {
		return false, err
	}
	tok, hint := s.RefreshToken, "refresh_token"
	if tok == "" {
		tok, hint = s.AccessToken, "access_token"
	}
	form := url.Values{"token": {tok}, "token_type_hint": {hint}}
	secret := s.ClientSecret
	if s.Registration == RegistrationPre && cfg.ClientSecretFile != "" {
		var err error
		if secret, err = readSecret(cfg.ClientSecretFile, "oauth.client_secret_file"); err != nil {
			return false, err
		}
	}
	basic := s.ClientAuth == config.AuthClientSecretBasic && secret != ""
	if !basic {
		form.Set("client_id", s.ClientID)
		if secret != "" {
			form.Set("client_secret", secret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.RevocationEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(s.ClientID), url.QueryEscape(secret))
	}
	resp, err := anon.Do(req)
	if err != nil {
		return true, fmt.Errorf("the revocation request to %s failed: %s", redact(s.RevocationEndpoint), scrubError(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return true, fmt.Errorf("the revocation endpoint %s answered HTTP %d", redact(s.RevocationEndpoint), resp.StatusCode)
	}
	return true, nil
}
