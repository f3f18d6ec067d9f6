package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/probe"
)

// registerAuth adds `driftd auth login|status|logout`: a person's session
// for a user-delegated MCP server, opened once and kept alive by the
// daemon (docs/authentication.md#logging-in-once).
func registerAuth(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("auth", "Log in to MCP servers that only accept a person's authorization; the daemon keeps the session.")

	login := cmd.Command("login", "Log in once (authorization code with PKCE, in your browser) for a target of the configuration, or for --base-url; the session is saved with mode 0600 where the daemon reads it.")
	lf := addSessionFlags(login)
	follow := login.Flag("follow", "Open the authorization URL yourself and follow its redirect, for an authorization server that approves without a person (automation, tests).").Bool()
	device := login.Flag("device", "Use a device code (RFC 8628) instead of a redirect, when the authorization server offers it: open the URL shown on any machine and enter the code.").Bool()
	callback := login.Flag("callback-address", "Where the redirect's callback listens, e.g. 127.0.0.1:8976 to reach it through `kubectl port-forward`.").Default("127.0.0.1:0").String()
	timeout := login.Flag("timeout", "How long to wait for the browser's redirect.").Default("5m").Duration()
	cmds[login.FullCommand()] = func(ctx context.Context, stdout, stderr io.Writer) error {
		t, err := lf.target()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		s, err := loginWith(ctx, t, loginHow{follow: *follow, device: *device, callback: *callback}, nil, stderr)
		if err != nil {
			return &exitError{exitNoProbe, fmt.Errorf("%s: %v", t.Name, err)}
		}
		path := t.OAuth.Login.StateFile
		if err := s.Save(path); err != nil {
			return &exitError{exitUsage, fmt.Errorf("the session could not be saved: %v", err)}
		}
		fmt.Fprintf(stdout, "logged in to %s: issuer %s, client %s (%s), scopes %q; access token until %s, refresh token: %s\nsession saved to %s (mode 0600)\n",
			t.Name, config.RedactedURL(s.Issuer), config.RedactedURL(s.ClientID), s.Registration, strings.Join(s.Scopes, " "),
			expiry(s.Expiry), yesNo(s.RefreshToken != ""), path)
		return nil
	}

	status := cmd.Command("status", "List each login target's session: where it is, who issued it, when its access token expires, whether it can be refreshed.")
	sf := addConfigFileFlag(status, "The configuration file.")
	cmds[status.FullCommand()] = func(_ context.Context, stdout, _ io.Writer) error {
		if *sf == "" {
			return usageErr("required flag --config.file not provided, try --help")
		}
		c, err := config.Load(*sf)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		n := 0
		for _, t := range c.Targets {
			l := t.OAuth.Login
			if l == nil {
				continue
			}
			n++
			s, err := oauth.LoadSession(l.SessionFile, l.StateFile)
			switch {
			case errors.Is(err, oauth.ErrNoSession):
				fmt.Fprintf(stdout, "%s: no session; run `driftd auth login %s`\n", t.Name, t.Name)
			case err != nil:
				fmt.Fprintf(stdout, "%s: the session cannot be read: %v\n", t.Name, err)
			default:
				fmt.Fprintf(stdout, "%s: issuer %s, logged in %s, last refreshed %s, access token until %s, refresh token: %s\n",
					t.Name, config.RedactedURL(s.Issuer), s.LoggedInAt.Format(time.RFC3339), s.UpdatedAt.Format(time.RFC3339), expiry(s.Expiry), yesNo(s.RefreshToken != ""))
			}
		}
		if n == 0 {
			fmt.Fprintln(stdout, "no target has an oauth.login block")
		}
		return nil
	}

	logout := cmd.Command("logout", "Revoke the session's tokens where the authorization server supports it (RFC 7009) and delete driftd's copy.")
	of := addSessionFlags(logout)
	cmds[logout.FullCommand()] = func(ctx context.Context, stdout, stderr io.Writer) error {
		t, err := of.target()
		if err != nil {
			return err
		}
		l := t.OAuth.Login
		s, err := oauth.LoadSession(l.SessionFile, l.StateFile)
		if errors.Is(err, oauth.ErrNoSession) {
			fmt.Fprintf(stdout, "%s: no session\n", t.Name)
			return nil
		}
		if err != nil {
			return &exitError{exitUsage, err}
		}
		anon, err := probe.NewHTTPClient(config.Anonymous(t.HTTPClient.HTTPClientConfig), version, 0)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		defer anon.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		revoked, err := oauth.Revoke(ctx, anon, s, &t.OAuth)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "driftd auth logout: warning: %v\n", err)
		case !revoked:
			fmt.Fprintf(stderr, "driftd auth logout: the authorization server has no revocation_endpoint: the tokens stay valid until they expire\n")
		}
		if err := os.Remove(l.StateFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(stdout, "%s: logged out; removed %s\n", t.Name, l.StateFile)
		if l.SessionFile != "" && l.SessionFile != l.StateFile {
			fmt.Fprintf(stdout, "%s: the session file %s you provided is yours to delete\n", t.Name, l.SessionFile)
		}
		return nil
	}
}

// sessionFlags name a login target: from the configuration, or a
// --base-url with its own session file.
type sessionFlags struct {
	configFile, name, baseURL, sessionFile string
	oauth                                  config.OAuth
	metadataURL                            string
}

func addSessionFlags(cmd *kingpin.CmdClause) *sessionFlags {
	f := &sessionFlags{}
	cmd.Arg("target", "The target's name in the configuration.").StringVar(&f.name)
	cmd.Flag("config.file", "The configuration file holding the target.").PlaceHolder("FILE").StringVar(&f.configFile)
	cmd.Flag("base-url", "An MCP endpoint not in a configuration (then --session-file is where the session goes).").PlaceHolder("URL").StringVar(&f.baseURL)
	cmd.Flag("session-file", "With --base-url: the session file (written with mode 0600).").PlaceHolder("PATH").StringVar(&f.sessionFile)
	cmd.Flag("oauth.client-id", "With --base-url: a pre-registered client.").PlaceHolder("ID").StringVar(&f.oauth.ClientID)
	cmd.Flag("oauth.client-secret-file", "With --base-url: the pre-registered client's secret.").PlaceHolder("PATH").StringVar(&f.oauth.ClientSecretFile)
	cmd.Flag("oauth.client-metadata-url", "With --base-url: the client ID metadata document you host (its URL is the client_id).").PlaceHolder("URL").StringVar(&f.metadataURL)
	cmd.Flag("oauth.scope", "With --base-url: request this scope (repeatable).").PlaceHolder("SCOPE").StringsVar(&f.oauth.Scopes)
	cmd.Flag("oauth.issuer", "With --base-url: pin the authorization server.").PlaceHolder("URL").StringVar(&f.oauth.Issuer)
	cmd.Flag("oauth.dpop", "With --base-url: auto, always or never.").PlaceHolder("MODE").StringVar(&f.oauth.DPoP)
	return f
}

// target resolves the flags to a target with a login block whose
// StateFile is where the session goes.
func (f *sessionFlags) target() (config.Target, error) {
	switch {
	case f.baseURL != "" && (f.name != "" || f.configFile != ""):
		return config.Target{}, usageErr("give a target of --config.file, or --base-url, not both")
	case f.baseURL != "":
		if f.sessionFile == "" {
			return config.Target{}, usageErr("--base-url needs --session-file: where the session goes")
		}
		if err := config.CheckTargetURL(f.baseURL); err != nil {
			return config.Target{}, usageErr("--base-url: %v", err)
		}
		name := "mcp"
		if u, err := url.Parse(f.baseURL); err == nil && nameOf(u.Hostname()) != "" {
			name = nameOf(u.Hostname())
		}
		t := config.NewTarget(name, f.baseURL)
		t.OAuth = f.oauth
		t.OAuth.Login = &config.Login{ClientMetadataURL: f.metadataURL, SessionFile: f.sessionFile, StateFile: f.sessionFile}
		if err := t.Validate(); err != nil {
			return t, usageErr("%v", oauthFlagNames.Replace(err.Error()))
		}
		return t, nil
	case f.name == "":
		return config.Target{}, usageErr("name a target of the configuration (and --config.file), or give --base-url")
	case f.configFile == "":
		return config.Target{}, usageErr("required flag --config.file not provided, try --help")
	}
	c, err := config.Load(f.configFile)
	if err != nil {
		return config.Target{}, &exitError{exitUsage, err}
	}
	for _, t := range c.Targets {
		if t.Name != f.name {
			continue
		}
		if t.OAuth.Login == nil {
			return t, usageErr("target %q has no oauth.login block: add `oauth: {login: {}}` to log in to it (docs/authentication.md)", t.Name)
		}
		return t, nil
	}
	return config.Target{}, usageErr("no target %q in %s", f.name, f.configFile)
}

// loginHow is how a login reaches the person.
type loginHow struct {
	follow, device bool
	callback       string
}

// loginFor logs a person in for t through the browser redirect, printing
// the URL to open on w.
func loginFor(ctx context.Context, t config.Target, follow bool, more []string, w io.Writer) (*oauth.Session, error) {
	return loginWith(ctx, t, loginHow{follow: follow}, more, w)
}

// loginWith logs a person in for t as how says.
func loginWith(ctx context.Context, t config.Target, how loginHow, more []string, w io.Writer) (*oauth.Session, error) {
	follow := how.follow
	anon, err := probe.NewHTTPClient(config.Anonymous(t.HTTPClient.HTTPClientConfig), version, 0)
	if err != nil {
		return nil, err
	}
	defer anon.CloseIdleConnections()
	anon.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return oauth.Login(ctx, oauth.LoginOptions{Endpoint: t.URL, OAuth: &t.OAuth, Anonymous: anon, Version: version, Follow: follow, MoreScopes: more,
		MaxDocumentBytes: t.MaxResponseBytes.Bytes(), Device: how.device, Listen: how.callback,
		ShowDevice: func(u, code string) {
			fmt.Fprintf(w, "driftd: to log in to %s, open this URL on any machine and enter the code %s:\n\n  %s\n\n", t.Name, code, u)
		},
		Show: func(u string) {
			if follow {
				fmt.Fprintf(w, "driftd: following the authorization URL for %s\n", t.Name)
				return
			}
			cb := "127.0.0.1"
			if pu, err := url.Parse(u); err == nil {
				cb = pu.Query().Get("redirect_uri")
			}
			fmt.Fprintf(w, "driftd: open this URL in your browser to log in to %s (driftd waits for its redirect to %s):\n\n  %s\n\n", t.Name, cb, u)
		}})
}

func expiry(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format(time.RFC3339)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
