package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	promconfig "github.com/prometheus/common/config"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/oauth"
	"github.com/driftd/driftd/internal/probe"
)

// targetFlags are the flags that mirror a config target, shared by check
// and capture.
type targetFlags struct {
	baseURL         string
	name            string
	headers         []string
	headerFiles     []string
	bearerTokenFile string
	timeout         time.Duration
	maxListPages    int
	maxResponse     string
	maxRun          string
	skipAuthProbe   bool
	environment     string
	invokeTools     []string
	invokeArgs      []string
	invokePrompts   []string
	invokeResources []string
	promptArgs      []string
	execute         bool
	iKnowProduction bool
	seed            uint64
	oauth           config.OAuth
	exchange        config.TokenExchange
	// A login session instead of a machine identity.
	sessionFile, metadataURL string
	login, loginFollow       bool
}

func addTargetFlags(cmd *kingpin.CmdClause) *targetFlags {
	f := &targetFlags{}
	cmd.Flag("base-url", "The MCP endpoint, e.g. https://orders.internal/mcp.").Required().StringVar(&f.baseURL)
	cmd.Flag("target", "Target name used in the report and fingerprints (default: the URL's host).").StringVar(&f.name)
	cmd.Flag("header", "Send header NAME=VALUE (repeatable). The value is treated as a secret.").PlaceHolder("NAME=VALUE").StringsVar(&f.headers)
	cmd.Flag("header-file", "Send header NAME with the contents of PATH, re-read on every request (repeatable).").PlaceHolder("NAME=PATH").StringsVar(&f.headerFiles)
	cmd.Flag("bearer-token-file", "Send Authorization: Bearer with the token in PATH, re-read on every request.").PlaceHolder("PATH").StringVar(&f.bearerTokenFile)
	cmd.Flag("timeout", "Deadline for the whole probe.").Default(config.DefaultTimeout.String()).DurationVar(&f.timeout)
	cmd.Flag("max-list-pages", "Stop paging tools/list (and prompts/list, resources/list, resources/templates/list) after this many pages.").Default(fmt.Sprint(config.DefaultMaxListPages)).IntVar(&f.maxListPages)
	defaults := config.DefaultGlobal()
	cmd.Flag("max-response-bytes", "Largest HTTP response body read (e.g. 16MiB).").Default(defaults.MaxResponseBytes.String()).StringVar(&f.maxResponse)
	cmd.Flag("max-run-bytes", "Bytes the whole run may read, all responses together (e.g. 64MiB): bounds its memory.").Default(defaults.MaxRunBytes.String()).StringVar(&f.maxRun)
	cmd.Flag("skip-auth-probe", "Do not send the extra anonymous tools/list when credentials are configured.").BoolVar(&f.skipAuthProbe)
	cmd.Flag("environment", "Classification override: local, dev, staging, production or unknown.").EnumVar(&f.environment, config.Classes...)
	o := &f.oauth
	cmd.Flag("oauth.client-id", "OAuth client ID of driftd's machine identity (docs/authentication.md); the token endpoint is found by MCP authorization discovery.").PlaceHolder("ID").StringVar(&o.ClientID)
	cmd.Flag("oauth.client-secret-file", "Client credentials grant with the client secret in PATH (client_secret_basic or _post).").PlaceHolder("PATH").StringVar(&o.ClientSecretFile)
	cmd.Flag("oauth.private-key-file", "Client credentials grant with private_key_jwt: a PEM EC P-256 or RSA key in PATH.").PlaceHolder("PATH").StringVar(&o.PrivateKeyFile)
	cmd.Flag("oauth.signing-algorithm", "The private_key_jwt assertion's algorithm: ES256 or RS256 (default: from the key).").PlaceHolder("ALG").StringVar(&o.SigningAlgorithm)
	cmd.Flag("oauth.assertion-file", "JWT-bearer grant (workload identity) with the JWT in PATH, re-read for every token request.").PlaceHolder("PATH").StringVar(&o.AssertionFile)
	cmd.Flag("oauth.auth-method", "Force the token endpoint authentication: client_secret_basic, client_secret_post, private_key_jwt or none.").PlaceHolder("METHOD").StringVar(&o.TokenEndpointAuthMethod)
	cmd.Flag("oauth.scope", "Request this scope instead of the challenge's or scopes_supported (repeatable).").PlaceHolder("SCOPE").StringsVar(&o.Scopes)
	cmd.Flag("oauth.issuer", "Pin the authorization server: credentials go only to this issuer.").PlaceHolder("URL").StringVar(&o.Issuer)
	cmd.Flag("oauth.token-url", "Skip discovery: request tokens here.").PlaceHolder("URL").StringVar(&o.TokenURL)
	cmd.Flag("oauth.resource", "With --oauth.token-url: the resource parameter (default: --base-url).").PlaceHolder("URL").StringVar(&o.Resource)
	cmd.Flag("oauth.dpop", "DPoP-bound tokens (RFC 9449): auto (when the authorization server advertises it), always or never.").PlaceHolder("MODE").StringVar(&o.DPoP)
	cmd.Flag("oauth.session-file", "A person's login session (driftd auth login --session-file): read, refreshed and written back here (mode 0600).").PlaceHolder("PATH").StringVar(&f.sessionFile)
	cmd.Flag("oauth.login", "Log in (authorization code with PKCE, in your browser: the URL is printed on stderr) when there is no session or it cannot serve.").BoolVar(&f.login)
	cmd.Flag("oauth.login-follow", "As --oauth.login, but driftd opens the authorization URL itself and follows its redirect: for an authorization server that approves without a person.").BoolVar(&f.loginFollow)
	cmd.Flag("oauth.client-metadata-url", "With a login: the client ID metadata document you host (its URL is the client_id).").PlaceHolder("URL").StringVar(&f.metadataURL)
	x := &f.exchange
	cmd.Flag("oauth.token-exchange.token-url", "Enterprise-managed authorization: the identity provider's token endpoint, which exchanges the subject token for the JWT-bearer grant's ID-JAG.").PlaceHolder("URL").StringVar(&x.TokenURL)
	cmd.Flag("oauth.token-exchange.client-id", "driftd's client ID at the identity provider.").PlaceHolder("ID").StringVar(&x.ClientID)
	cmd.Flag("oauth.token-exchange.client-secret-file", "driftd's client secret at the identity provider, if it has one.").PlaceHolder("PATH").StringVar(&x.ClientSecretFile)
	cmd.Flag("oauth.token-exchange.subject-token-file", "The identity token (an OpenID Connect ID token) to exchange, re-read for every exchange.").PlaceHolder("PATH").StringVar(&x.SubjectTokenFile)
	return f
}

// addInvokeFlags adds the opt-in tools/call, prompts/get and
// resources/read flags of check.
func (f *targetFlags) addInvokeFlags(cmd *kingpin.CmdClause) {
	cmd.Flag("invoke-tool", "Plan a tools/call of this declared tool (exact name, repeatable); nothing is sent without --execute.").PlaceHolder("NAME").StringsVar(&f.invokeTools)
	cmd.Flag("invoke-arguments", "Call NAME with this JSON object instead of generated arguments; checked against its declared inputSchema first (repeatable).").PlaceHolder("NAME=JSON").StringsVar(&f.invokeArgs)
	cmd.Flag("invoke-prompt", "Plan a prompts/get of this declared prompt (exact name, repeatable); nothing is sent without --execute.").PlaceHolder("NAME").StringsVar(&f.invokePrompts)
	cmd.Flag("invoke-resource", "Plan a resources/read of this declared resource (exact uri, repeatable); nothing is sent without --execute.").PlaceHolder("URI").StringsVar(&f.invokeResources)
	cmd.Flag("invoke-prompt-arguments", "Get prompt NAME with these arguments, a JSON object of strings; required ones not given are generated from --seed (repeatable).").PlaceHolder("NAME=JSON").StringsVar(&f.promptArgs)
	cmd.Flag("execute", "Send the planned tools/call, prompts/get and resources/read requests.").BoolVar(&f.execute)
	cmd.Flag("i-know-this-is-production", "Allow --execute on a target that does not classify as local, dev or staging.").BoolVar(&f.iKnowProduction)
	cmd.Flag("seed", "Seed for the generated arguments (recorded in the report).").Default("1").Uint64Var(&f.seed)
}

// nameOf makes a target name of a host: lower case, each run of
// characters other than a-z, 0-9, '_', '.' and '-' one '-', and none of
// '-', '.', '_' at either end.
func nameOf(host string) string {
	var b strings.Builder
	run := false
	for _, c := range []byte(strings.ToLower(host)) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' {
			b.WriteByte(c)
			run = false
		} else if !run {
			b.WriteByte('-')
			run = true
		}
	}
	return strings.Trim(b.String(), "-._")
}

// target builds and validates the config target the flags describe.
func (f *targetFlags) target() (config.Target, error) {
	// The default name comes from the URL's host: check the URL first, or
	// a URL without one ("localhost:8080/mcp") is also reported as a
	// missing name.
	if err := config.CheckTargetURL(f.baseURL); err != nil {
		return config.Target{}, usageErr("--base-url: %v", err)
	}
	name := f.name
	if name == "" {
		if u, err := url.Parse(f.baseURL); err == nil {
			name = nameOf(u.Hostname())
		}
		if len(name) > 63 {
			name = name[:63]
		}
	}
	t := config.NewTarget(name, f.baseURL)
	t.Timeout, t.MaxListPages, t.SkipAuthProbe, t.Environment = f.timeout, f.maxListPages, f.skipAuthProbe, f.environment
	for _, b := range []struct {
		flag, value string
		into        *config.ByteSize
	}{{"--max-response-bytes", f.maxResponse, &t.MaxResponseBytes}, {"--max-run-bytes", f.maxRun, &t.MaxRunBytes}} {
		size, err := config.ParseByteSize(b.value)
		if err != nil || size.Bytes() < 1024 {
			return t, usageErr("%s %q: want a size of at least 1KiB such as 16MiB", b.flag, b.value)
		}
		*b.into = size
	}
	t.Invoke = config.Invoke{Tools: f.invokeTools, Prompts: f.invokePrompts, Resources: f.invokeResources,
		Execute: f.execute, IKnowThisIsProduction: f.iKnowProduction, Seed: f.seed}
	for _, a := range f.promptArgs {
		name, raw, _ := strings.Cut(a, "=")
		var args map[string]string
		if err := json.Unmarshal([]byte(raw), &args); err != nil || args == nil || !slices.Contains(f.invokePrompts, name) {
			return t, usageErr("--invoke-prompt-arguments for %q: want NAME=JSON, a JSON object of strings, for a prompt named by --invoke-prompt", name)
		}
		if t.Invoke.PromptArguments == nil {
			t.Invoke.PromptArguments = map[string]map[string]string{}
		}
		t.Invoke.PromptArguments[name] = args
	}
	for _, a := range f.invokeArgs {
		name, raw, _ := strings.Cut(a, "=")
		args, err := decodeArguments(raw)
		if err != nil || args == nil || !slices.Contains(f.invokeTools, name) {
			return t, usageErr("--invoke-arguments for %q: want NAME=JSON, a JSON object, for a tool named by --invoke-tool", name)
		}
		if t.Invoke.Arguments == nil {
			t.Invoke.Arguments = map[string]map[string]any{}
		}
		t.Invoke.Arguments[name] = args
	}
	hc := &t.HTTPClient.HTTPClientConfig
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return t, usageErr("--header %q: want NAME=VALUE", redactFlag(h))
		}
		if err := checkHeader("--header", k, v); err != nil {
			return t, err
		}
		if http.CanonicalHeaderKey(k) == "Authorization" {
			scheme, cred, _ := strings.Cut(v, " ")
			hc.Authorization = &promconfig.Authorization{Type: scheme, Credentials: promconfig.Secret(cred)}
			continue
		}
		addHeader(hc, k, func(h *promconfig.Header) { h.Secrets = append(h.Secrets, promconfig.Secret(v)) })
	}
	for _, h := range f.headerFiles {
		k, path, ok := strings.Cut(h, "=")
		if !ok || k == "" || path == "" {
			return t, usageErr("--header-file %q: want NAME=PATH", h)
		}
		if err := checkHeader("--header-file", k, ""); err != nil {
			return t, err
		}
		addHeader(hc, k, func(h *promconfig.Header) { h.Files = append(h.Files, path) })
	}
	if f.bearerTokenFile != "" {
		if hc.Authorization != nil {
			return t, usageErr("--bearer-token-file and an Authorization --header cannot be combined")
		}
		hc.Authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: f.bearerTokenFile}
	}
	t.OAuth = f.oauth
	if f.sessionFile != "" || f.login || f.loginFollow || f.metadataURL != "" {
		t.OAuth.Login = &config.Login{ClientMetadataURL: f.metadataURL, SessionFile: f.sessionFile, StateFile: f.sessionFile}
	}
	if f.exchange != (config.TokenExchange{}) {
		x := f.exchange
		t.OAuth.TokenExchange = &x
	}
	if err := t.Validate(); err != nil {
		return t, usageErr("%v", oauthFlagNames.Replace(err.Error()))
	}
	return t, nil
}

// sessionLogin sets opts up for a login target: the session the flags
// name, logged into first when --oauth.login(-follow) is given and there
// is none, and logged into again during the run when the session cannot
// serve or a server asks for more scopes.
func (f *targetFlags) sessionLogin(ctx context.Context, t config.Target, opts *probe.Options, stderr io.Writer) error {
	l := t.OAuth.Login
	if l == nil {
		return nil
	}
	opts.Tokens = oauth.NewTokens()
	if !f.login && !f.loginFollow {
		return nil
	}
	src := &oauth.SessionSource{Target: t.Name, Provided: l.SessionFile, Own: l.StateFile}
	if _, err := oauth.LoadSession(src.Provided, src.Own); errors.Is(err, oauth.ErrNoSession) {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		s, err := loginFor(lctx, t, f.loginFollow, nil, stderr)
		cancel()
		if err != nil {
			return &exitError{exitNoProbe, fmt.Errorf("%s: login: %v", t.Name, err)}
		}
		if src.Own != "" {
			if err := s.Save(src.Own); err != nil {
				return &exitError{exitUsage, fmt.Errorf("the session could not be saved: %v", err)}
			}
		}
		opts.Tokens.KeepSession(src, s)
	}
	opts.Login = func(ctx context.Context, more []string) (*oauth.Session, error) {
		return loginFor(ctx, t, f.loginFollow, more, stderr)
	}
	return nil
}

// oauthFlagNames turns the oauth block's field names in a config error
// into check's flags.
var oauthFlagNames = func() *strings.Replacer {
	var pairs []string
	for _, f := range [][2]string{{"login.client_metadata_url", "client-metadata-url"}, {"login", "login"},
		{"token_exchange.token_url", "token-exchange.token-url"}, {"token_exchange.client_id", "token-exchange.client-id"},
		{"token_exchange.client_secret_file", "token-exchange.client-secret-file"}, {"token_exchange.subject_token_file", "token-exchange.subject-token-file"},
		{"token_exchange", "token-exchange.*"}, {"client_secret_file", "client-secret-file"}, {"private_key_file", "private-key-file"},
		{"assertion_file", "assertion-file"}, {"client_id", "client-id"}, {"token_endpoint_auth_method", "auth-method"},
		{"signing_algorithm", "signing-algorithm"}, {"issuer", "issuer"}, {"token_url", "token-url"}, {"resource", "resource"},
		{"dpop", "dpop"}, {"scopes", "scope"}} {
		pairs = append(pairs, "oauth."+f[0], "--oauth."+f[1])
	}
	for _, f := range [][2]string{{"client_secret_file", "client-secret-file"}, {"private_key_file", "private-key-file"}, {"assertion_file", "assertion-file"}, {"token_exchange", "token-exchange.*"}} {
		pairs = append(pairs, f[0], "--oauth."+f[1])
	}
	return strings.NewReplacer(pairs...)
}()

// addHeader changes the configured header k, creating it.
func addHeader(hc *promconfig.HTTPClientConfig, k string, change func(*promconfig.Header)) {
	if hc.HTTPHeaders == nil {
		hc.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{}}
	}
	h := hc.HTTPHeaders.Headers[k]
	change(&h)
	hc.HTTPHeaders.Headers[k] = h
}

// checkHeader refuses up front what net/http would refuse only when the
// request is sent, where the failure would read as the server's: a name
// that is not an RFC 7230 token, a value with CR, LF or NUL. Neither is
// quoted: the value is a secret, and a malformed name may hold one too
// ("Authorization: Bearer …=").
func checkHeader(flag, name, value string) error {
	if !mcp.IsToken(name) {
		return usageErr("%s: the header name is not a valid token (RFC 7230: letters, digits and !#$%%&'*+-.^_`|~)", flag)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return usageErr("%s %s: the header value contains CR, LF or NUL", flag, name)
	}
	return nil
}

// redactFlag keeps a malformed flag's name but never its value.
func redactFlag(s string) string {
	if k, _, ok := strings.Cut(s, "="); ok {
		return k + "=<secret>"
	}
	return "<secret>"
}

// decodeArguments decodes a JSON object of tool arguments keeping each
// number as written (json.Number): a float64 would round an integer above
// 2^53 before it is sent.
func decodeArguments(raw string) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	var args map[string]any
	if err := d.Decode(&args); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value")
	}
	return args, nil
}
