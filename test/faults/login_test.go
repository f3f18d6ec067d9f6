package faults_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loginRow is a hostile peer of a person's login and what driftd must
// make of it.
type loginRow struct {
	name  string
	peers func() *oauthPeers
	// login is the exit code of `driftd auth login --follow`; when it is
	// not exitOK, check --oauth.login-follow exits the same without a
	// report, and the daemon's target has no session (auth_required).
	login int
	// reason is the failure_reason of a run with the saved session (""
	// a successful run).
	reason string
	// after checks what the peers saw once the runs are over.
	after func(t *testing.T, p *oauthPeers)
	// formats runs check in every output format; the others run --json
	// only.
	formats bool
	// relogin: the session cannot serve (invalid_grant), so check
	// --oauth.login-follow logs in again and its run succeeds, where
	// the daemon's ends as reason.
	relogin bool
	// redacts: the echo reaches the JSON report, which must show it
	// redacted.
	redacts bool
}

// runReason is what a run of the row's target ends as.
func (row loginRow) runReason() string {
	if row.login != exitOK {
		return "auth_required"
	}
	return row.reason
}

// loginRows are the Login rows: hostile MCP servers, authorization
// endpoints, token endpoints (the code exchange and the refresh) and
// registration endpoints, each with what driftd must make of it.
func loginRows() []loginRow {
	noProbe := exitNoProbe
	refreshed := func(t *testing.T, p *oauthPeers) {
		if p.registrations.Load() == 0 || p.authorizations.Load() == 0 {
			t.Errorf("%d registrations, %d authorizations: the row tested nothing", p.registrations.Load(), p.authorizations.Load())
		}
		if p.refreshRequests.Load() == 0 {
			t.Error("no refresh reached the authorization server: the row tested nothing")
		}
	}
	authorized := func(t *testing.T, p *oauthPeers) {
		if p.authorizations.Load() == 0 {
			t.Error("no authorization request reached the authorization server: the row tested nothing")
		}
	}
	exchanged := func(t *testing.T, p *oauthPeers) {
		if p.tokenRequests.Load() == 0 {
			t.Error("no code exchange reached the authorization server: the row tested nothing")
		}
	}
	return []loginRow{
		// The MCP server echoes what it was presented.
		{name: "MCP echoes Authorization and DPoP in the listing", redacts: true, formats: true, after: refreshed,
			peers: func() *oauthPeers { return &oauthPeers{login: true, dpop: true, mcp: echoListing} }},
		{name: "MCP echoes the bearer token in the listing", redacts: true, after: refreshed,
			peers: func() *oauthPeers { return &oauthPeers{login: true, mcp: echoListing} }},
		{name: "MCP echoes Authorization and DPoP in a JSON-RPC error", formats: true, reason: "jsonrpc_error", after: refreshed,
			peers: func() *oauthPeers { return &oauthPeers{login: true, dpop: true, mcp: echoRPCError} }},
		{name: "MCP echoes Authorization and DPoP in a 401 and its challenges", formats: true, reason: "auth_required", after: refreshed,
			peers: func() *oauthPeers { return &oauthPeers{login: true, dpop: true, mcp: echoRefusal} }},

		// The authorization endpoint's redirect.
		{name: "authorization redirect echoes the code as the error", login: noProbe, after: authorized,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, authorize: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.approve(w, r, func(code string) url.Values {
						return url.Values{"error": {code}, "error_description": {code + " " + r.URL.RawQuery}, "error_uri": {"http://x/" + code}}
					})
				}}
			}},
		{name: "authorization redirect puts the code in iss", login: noProbe, after: authorized,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, authorize: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.approve(w, r, func(code string) url.Values { return url.Values{"iss": {p.as.URL + "/" + code}} })
				}}
			}},
		{name: "authorization redirect carries the code twice and a second state", login: noProbe, after: authorized,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, authorize: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.approve(w, r, func(code string) url.Values {
						return url.Values{"state": {code, r.URL.Query().Get("state")}, "code": {code, code + "-2"}}
					})
				}}
			}},

		// The token endpoint at the code exchange.
		{name: "token endpoint echoes the code, verifier and client secret as error and description", login: noProbe, after: exchanged,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, dpop: true, token: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.PostFormValue("code"), "error_uri": "http://x/" + r.PostFormValue("code_verifier"),
						"error_description": loginSecrets(r)}
				})}
			}},
		{name: "token endpoint echoes the code exchange form-encoded", login: noProbe, after: exchanged,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, token: oauthRefuseForm(func(r *http.Request) string {
					_, s, _ := r.BasicAuth()
					return url.Values{"error": {s}, "error_description": {loginSecrets(r)}}.Encode()
				})}
			}},
		{name: "token endpoint puts the tokens in other fields at the code exchange", redacts: true, formats: true, after: refreshed,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, mcp: echoListing, token: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.issue(w, r, func(tok string) map[string]any {
						return map[string]any{"scope": tok + " " + r.PostFormValue("code"), "id_token": r.PostFormValue("code_verifier"),
							"issued_token_type": tok, "error_description": loginSecrets(r), "error_uri": "http://x/" + tok}
					})
				}}
			}},

		// The token endpoint at the refresh.
		{name: "refresh echoes the refresh token and client secret as error and description", formats: true, reason: "auth_required", after: refreshed,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, dpop: true, refresh: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": r.PostFormValue("refresh_token"), "error_description": loginSecrets(r), "error_uri": "http://x/" + r.PostFormValue("refresh_token")}
				})}
			}},
		{name: "refresh echoes the refresh token as invalid_grant", reason: "auth_required", relogin: true, after: refreshed,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, refresh: oauthRefuse(http.StatusBadRequest, func(r *http.Request) map[string]string {
					return map[string]string{"error": "invalid_grant", "error_description": loginSecrets(r)}
				})}
			}},
		{name: "refresh puts the tokens in other fields", redacts: true, formats: true, after: refreshed,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, dpop: true, mcp: echoListing, refresh: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.issue(w, r, func(tok string) map[string]any {
						return map[string]any{"scope": r.PostFormValue("refresh_token"), "id_token": tok, "error_description": loginSecrets(r),
							"issued_token_type": r.PostFormValue("refresh_token")}
					})
				}}
			}},

		// The registration endpoint.
		{name: "registration echoes its client secret in every field", redacts: true, formats: true, after: refreshed,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, mcp: echoListing, register: func(p *oauthPeers, w http.ResponseWriter, _ *http.Request) {
					p.registerClient(w, func(secret string) map[string]any {
						return map[string]any{"client_name": secret, "client_uri": "http://x/" + secret, "software_id": secret,
							"scope": secret, "registration_access_token": secret, "registration_client_uri": "http://x/" + secret}
					})
				}}
			}},
		{name: "registration refuses, echoing the request", login: noProbe,
			after: func(t *testing.T, p *oauthPeers) {
				if p.registrations.Load() == 0 {
					t.Error("no registration request: the row tested nothing")
				}
			},
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, register: func(_ *oauthPeers, w http.ResponseWriter, r *http.Request) {
					// The request carries no secret: what is echoed is checked
					// for anything else.
					b, _ := json.Marshal(map[string]string{"error": "invalid_client_metadata\x1b[2J", "error_description": headerDump(r)})
					writeJSON(w, http.StatusBadRequest, b)
				}}
			}},

		// Hostile authorization servers end as classified failures in time.
		{name: "authorization endpoint redirects to another host", login: noProbe,
			after: func(t *testing.T, p *oauthPeers) {
				authorized(t, p)
				if n := p.otherHits.Load(); n != 0 {
					t.Errorf("the other host received %d requests", n)
				}
			},
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, authorize: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					code := p.newSecret(oauthCodePre)
					http.Redirect(w, r, p.other.URL+"/callback?"+url.Values{"code": {code}, "state": {r.URL.Query().Get("state")}}.Encode(), http.StatusFound)
				}}
			}},
		{name: "token endpoint hangs during the refresh", reason: "timeout", after: refreshed,
			peers: func() *oauthPeers { return &oauthPeers{login: true, dpop: true, refresh: hang} }},
		{name: "refresh answers a garbage token_type", formats: true, reason: "auth_required", after: refreshed,
			peers: func() *oauthPeers {
				return &oauthPeers{login: true, mcp: echoListing, refresh: func(p *oauthPeers, w http.ResponseWriter, r *http.Request) {
					p.issue(w, r, func(tok string) map[string]any {
						return map[string]any{"token_type": "\x1b]8;;garbage\u202e " + tok + " " + r.PostFormValue("refresh_token") + "\r\n"}
					})
				}}
			}},
	}
}

// loginSecrets is every secret of a login's token request, one string:
// the code, the PKCE verifier, the refresh token, the client secret
// (Basic or form), and the Authorization and DPoP headers as sent.
func loginSecrets(r *http.Request) string {
	_, secret, _ := r.BasicAuth()
	if s := r.PostFormValue("client_secret"); s != "" {
		secret = s
	}
	return fmt.Sprintf("code %s code_verifier %s refresh_token %s secret %s authorization %s dpop %s",
		r.PostFormValue("code"), r.PostFormValue("code_verifier"), r.PostFormValue("refresh_token"), secret,
		r.Header.Get("Authorization"), r.Header.Get("DPoP"))
}

// loginForbidden is what no artifact may carry: the markers (every
// code, refresh token, access token and registered client secret starts
// with one), what the peers received (PKCE verifiers, Basic credentials,
// DPoP proofs), and the lines of the DPoP keys of the sessions given.
func loginForbidden(t *testing.T, sessions []string, peers ...*oauthPeers) []string {
	out := []string{oauthMark}
	for _, p := range peers {
		out = append(out, p.received()...)
	}
	for _, path := range sessions {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var s struct {
			DPoPKey string `json:"dpop_key"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Errorf("session %s: %v", path, err)
			continue
		}
		for line := range strings.SplitSeq(s.DPoPKey, "\n") {
			if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// checkSessionFile asserts the session file is mode 0600 and holds the
// markers it should: the refresh token, and the client secret when
// registration issued one.
func checkSessionFile(t *testing.T, path string, dpop bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("no session saved: %v", err)
		return
	}
	if m := fi.Mode(); m != 0o600 {
		t.Errorf("the session file %s has mode %v, want 0600", path, m)
	}
	b, _ := os.ReadFile(path)
	var s struct {
		RefreshToken string `json:"refresh_token"`
		DPoPKey      string `json:"dpop_key"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Errorf("the session file is not JSON: %v", err)
		return
	}
	if !strings.HasPrefix(s.RefreshToken, oauthRefreshPre) {
		t.Errorf("the session holds no marker refresh token: %q", s.RefreshToken)
	}
	if dpop && s.DPoPKey == "" {
		t.Error("the session of a DPoP server holds no DPoP key")
	}
}

// TestLoginCheck runs, for every Login row, `driftd auth login --base-url
// --session-file --follow` and then `driftd check --oauth.login-follow
// --oauth.session-file` (a session of its own, so check logs in too) —
// in every output format written with -o for the rows marked so, --json
// otherwise — with spans to an OTLP/HTTP receiver. It asserts the exit
// codes, the failure reason, the bounds, the session file's mode, and
// that no code, PKCE verifier, refresh token, access token, registered
// client secret or DPoP key line is in stdout, stderr, the report or a
// span.
func TestLoginCheck(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	manifest := writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	sem := make(chan struct{}, parallelChecks)
	for _, row := range loginRows() {
		formats := []string{"json"}
		if row.formats {
			formats = append(formats, "text", "sarif", "junit", "markdown")
		}
		for _, format := range formats {
			t.Run(row.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				p := row.peers().start(t)
				sink := newSpanSink(t)
				tmp := t.TempDir()
				var sessions []string
				var outputs []result
				if format == "json" {
					// The login command alone, its own session.
					sf := filepath.Join(tmp, "login", "session.json")
					res := runDriftd(t, "auth", "login", "--base-url", p.endpoint(), "--session-file", sf, "--follow", "--timeout", "10s")
					t.Logf("auth login: exit %d, %v, stdout %.300q, stderr %.300q", res.code, res.wall.Round(10e6), res.stdout.String(), res.stderr.String())
					if res.code != row.login {
						t.Errorf("auth login: exit %d, want %d\nstderr:\n%.1000s", res.code, row.login, res.stderr.String())
					}
					checkBounded(t, res, probeTimeout)
					if row.login == exitOK {
						checkSessionFile(t, sf, p.dpop)
					} else if _, err := os.Stat(sf); err == nil {
						t.Error("a failed login saved a session")
					}
					sessions = append(sessions, sf)
					outputs = append(outputs, res)
				}
				sf := filepath.Join(tmp, "check", "session.json")
				out := filepath.Join(tmp, "report."+format)
				res := runDriftd(t, "check", manifest, "--base-url", p.endpoint(), "--target", "faults-login", "--oauth.login-follow",
					"--oauth.session-file", sf, "--timeout", probeTimeout.String(), "--format", format, "-o", out, "--otlp-endpoint", sink.URL)
				sessions = append(sessions, sf)
				outputs = append(outputs, res)
				written, err := os.ReadFile(out)
				var rep report
				switch {
				case row.login != exitOK:
					if res.code != row.login {
						t.Errorf("check: exit %d, want %d (the login fails)\nstderr:\n%.1000s", res.code, row.login, res.stderr.String())
					}
				case err != nil:
					t.Fatalf("no report written: %v\nstderr:\n%.2000s", err, res.stderr.String())
				default:
					if format == "json" {
						if err := json.Unmarshal(written, &rep); err != nil {
							t.Errorf("the report is not JSON: %v\n%.2000s", err, written)
						}
					}
					reason := row.reason
					if row.relogin {
						reason = ""
					}
					want := []int{exitOK, exitFindings}
					if reason != "" {
						want = []int{exitNoProbe}
					}
					if !slices.Contains(want, res.code) {
						t.Errorf("check: exit %d, want one of %v (reason %q: %.400s)\nstderr:\n%.1000s", res.code, want, rep.FailureReason, rep.FailureMessage, res.stderr.String())
					}
					if format == "json" && rep.FailureReason != reason {
						t.Errorf("failure_reason %q, want %q (%.400s)", rep.FailureReason, reason, rep.FailureMessage)
					}
					checkSessionFile(t, sf, p.dpop)
				}
				nspans, spans := sink.all()
				t.Logf("check: exit %d, %v, peak RSS %d MiB, report %d B, reason %q, %d token requests (%d refreshes), %d spans: %.300s\nstderr: %.300q",
					res.code, res.wall.Round(10e6), res.maxRSSKiB>>10, len(written), rep.FailureReason, p.tokenRequests.Load(), p.refreshRequests.Load(), nspans, rep.FailureMessage, res.stderr.String())
				// The login is bounded by the row's own peers: all answer at once.
				checkBounded(t, res, probeTimeout)
				if len(written) > maxReportBytes {
					t.Errorf("the report is %d bytes, bound %d", len(written), maxReportBytes)
				}
				if row.login == exitOK && nspans == 0 {
					t.Error("no span reached the receiver: the sweep of spans tested nothing")
				}
				forbidden := loginForbidden(t, sessions, p)
				for i, o := range outputs {
					sweep(t, fmt.Sprintf("stdout %d", i), o.stdout.String(), forbidden)
					sweep(t, fmt.Sprintf("stderr %d", i), o.stderr.String(), forbidden)
				}
				sweep(t, "the "+format+" report", string(written), forbidden)
				sweep(t, "the spans", spans, forbidden)
				if bad := unsafeText(string(written)); bad != "" {
					t.Errorf("the report carries a raw %s", bad)
				}
				if format == "json" && row.redacts && !strings.Contains(string(written), `\u003credacted\u003e`) && !strings.Contains(string(written), "<redacted>") {
					t.Error("the report shows no <redacted>: the echo did not reach it, and the sweep tested nothing")
				}
				if row.after != nil && format == "json" {
					row.after(t, p)
				}
			})
		}
	}
}

// TestLoginDaemon gives `driftd run` every Login row as an `oauth: {login:
// {}}` target at @every 1s, timeout 2s, each logged into first by `driftd
// auth login NAME --config.file --follow`, its spans to an OTLP/HTTP
// receiver; every issued access token expires at once, so each run
// refreshes. It asserts each last run's reason and duration, and sweeps
// every page and API answer, /metrics, the log, the state files other
// than the sessions, and the spans.
func TestLoginDaemon(t *testing.T) {
	needBinary(t)
	if raceEnabled {
		t.Skip("the race detector slows the hostile servers too much for the daemon's bounds; make faults runs it")
	}
	dir := t.TempDir()
	writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	sink := newSpanSink(t)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global: {schedule: \"@every 1s\", timeout: 2s, state_dir: state}\ntracing: {endpoint: %q, compression: none}\ntargets:\n", sink.URL)
	rows := loginRows()
	var peers []*oauthPeers
	byName := map[string]loginRow{}
	var names, sessions []string
	for i, row := range rows {
		p := row.peers().start(t)
		peers = append(peers, p)
		name := fmt.Sprintf("l%02d", i)
		names = append(names, name)
		byName[name] = row
		sessions = append(sessions, filepath.Join(dir, "state", "sessions", name+".json"))
		t.Logf("target %s: %s", name, row.name)
		fmt.Fprintf(&cfg, "  - name: %s\n    url: %q\n    manifest: declared.json\n    oauth: {login: {}}\n", name, p.endpoint())
	}
	config := writeFile(t, dir, "driftd.yml", []byte(cfg.String()))

	var logins []result
	for i, name := range names {
		res := runDriftd(t, "auth", "login", name, "--config.file", config, "--follow", "--timeout", "10s")
		logins = append(logins, res)
		if res.code != rows[i].login {
			t.Errorf("%s (%s): auth login exit %d, want %d\nstderr:\n%.1000s", name, rows[i].name, res.code, rows[i].login, res.stderr.String())
		}
		checkBounded(t, res, probeTimeout)
		if rows[i].login == exitOK {
			checkSessionFile(t, sessions[i], peers[i].dpop)
		}
	}

	d := startDaemon(t, config, "--log.format=json", "--log.level=debug")
	var targets []struct {
		Name    string `json:"name"`
		LastRun *struct {
			FailureReason   string  `json:"failure_reason"`
			FailureMessage  string  `json:"failure_message"`
			DurationSeconds float64 `json:"duration_seconds"`
		} `json:"last_run"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		targets = nil
		r := get(d.base + "/api/v1/targets")
		done := 0
		if r.err == nil && json.Unmarshal(apiData(r.body), &targets) == nil {
			for _, tg := range targets {
				if tg.LastRun != nil {
					done++
				}
			}
		}
		if done == len(rows) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d targets finished a run after 30 s:\n%.4000s", done, len(rows), d.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A second run: it refreshes again, with the rotated refresh token.
	time.Sleep(2500 * time.Millisecond)
	if err := json.Unmarshal(apiData(get(d.base+"/api/v1/targets").body), &targets); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		row := byName[tg.Name]
		if tg.LastRun == nil {
			t.Errorf("%s (%s): no run", tg.Name, row.name)
			continue
		}
		t.Logf("%s (%s): %q in %.2fs: %.200s", tg.Name, row.name, tg.LastRun.FailureReason, tg.LastRun.DurationSeconds, tg.LastRun.FailureMessage)
		if want := row.runReason(); tg.LastRun.FailureReason != want {
			t.Errorf("%s (%s): failure_reason %q, want %q (%.300s)", tg.Name, row.name, tg.LastRun.FailureReason, want, tg.LastRun.FailureMessage)
		}
		if tg.LastRun.DurationSeconds > 3 {
			t.Errorf("%s (%s): last run took %.2fs, more than the 2 s deadline plus one second", tg.Name, row.name, tg.LastRun.DurationSeconds)
		}
	}

	pages := []string{"/metrics", "/api/v1/targets", "/config", "/"}
	for _, n := range names {
		pages = append(pages, "/api/v1/targets/"+n, "/api/v1/targets/"+n+"/history", "/targets/"+n,
			"/targets/"+n+"/schema?tool=a&direction=input")
	}
	forbidden := loginForbidden(t, sessions, peers...)
	for _, pg := range pages {
		r := get(d.base + pg)
		if r.err != nil {
			t.Errorf("%s: %v", pg, r.err)
			continue
		}
		checkArtifact(t, pg, r.body, maxPageBytes)
		sweep(t, pg, r.body, forbidden)
	}
	if m := get(d.base + "/metrics").body; !strings.Contains(m, `grant_type="refresh_token"`) && !strings.Contains(m, `driftd_oauth_token_requests_total{outcome="success"`) {
		t.Error("/metrics shows no token request: the daemon's rows tested nothing")
	}

	d.stop(syscall.SIGTERM)
	forbidden = loginForbidden(t, sessions, peers...) // what came since
	for i, res := range logins {
		sweep(t, names[i]+" auth login stdout", res.stdout.String(), forbidden)
		sweep(t, names[i]+" auth login stderr", res.stderr.String(), forbidden)
	}
	checkArtifact(t, "the log", d.log.String(), int(d.log.Total())+1)
	sweep(t, "the log", d.log.String(), forbidden)
	nfiles := 0
	filepath.WalkDir(filepath.Join(dir, "state"), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if slices.Contains(sessions, path) {
			// The one place the secrets belong; still mode 0600 after
			// the daemon's refreshes wrote it.
			i := slices.Index(sessions, path)
			checkSessionFile(t, path, peers[i].dpop)
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		nfiles++
		rel, _ := filepath.Rel(dir, path)
		sweep(t, rel, string(b), forbidden)
		return nil
	})
	if nfiles == 0 {
		t.Error("no state written besides the sessions")
	}
	nspans, spans := sink.all()
	t.Logf("%d pages, %d state files, %d spans, log %d bytes swept", len(pages), nfiles, nspans, d.log.Total())
	if nspans == 0 {
		t.Error("no span reached the receiver: the sweep of spans tested nothing")
	}
	sweep(t, "the spans", spans, forbidden)
	for i, p := range peers {
		if row := rows[i]; row.after != nil {
			t.Run(names[i]+" "+row.name, func(t *testing.T) { row.after(t, p) })
		}
	}
}

// badSessions are session files that cannot be a session: a FIFO (open
// would wait for a writer), 10 MB, and text that is not JSON, each with
// what the message must say.
func badSessions(t *testing.T, dir string) map[string]string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	big := writeFile(t, dir, "big.json", append([]byte(`{"version":1,"refresh_token":"`+oauthRefreshPre), make([]byte, 10<<20)...))
	notJSON := writeFile(t, dir, "not.json", []byte("refresh_token: "+oauthRefreshPre+"yaml\n"))
	return map[string]string{fifo: "not a regular file", big: "over", notJSON: "is not a driftd session"}
}

// TestLoginSessionFiles gives `driftd check --oauth.session-file` (with
// and without --oauth.login-follow) and a daemon's login targets a
// session file that is a FIFO, 10 MB or not JSON, and the daemon's own
// copy as a FIFO: each run ends as auth_required within its deadline,
// saying what is wrong with the file, and never hangs or prints what the
// file holds.
func TestLoginSessionFiles(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	manifest := writeFile(t, dir, "declared.json", []byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	files := badSessions(t, filepath.Join(dir, "sessions"))
	p := (&oauthPeers{login: true}).start(t)
	for path, says := range files {
		for _, login := range []bool{false, true} {
			args := []string{"check", manifest, "--base-url", p.endpoint(), "--target", "faults-login", "--oauth.session-file", path,
				"--timeout", probeTimeout.String(), "--json"}
			if login {
				args = append(args, "--oauth.login-follow")
			}
			res := runDriftd(t, args...)
			var rep report
			_ = json.Unmarshal([]byte(res.stdout.String()), &rep)
			what := fmt.Sprintf("%s (login %v)", filepath.Base(path), login)
			t.Logf("%s: exit %d in %v, %q: %.300s", what, res.code, res.wall.Round(10e6), rep.FailureReason, rep.FailureMessage)
			if res.code != exitNoProbe || rep.FailureReason != "auth_required" {
				t.Errorf("%s: exit %d, reason %q, want %d auth_required\nstderr:\n%.1000s", what, res.code, rep.FailureReason, exitNoProbe, res.stderr.String())
			}
			if !strings.Contains(rep.FailureMessage, says) {
				t.Errorf("%s: the message does not say %q: %.400s", what, says, rep.FailureMessage)
			}
			checkBounded(t, res, probeTimeout)
			sweep(t, what+" stdout", res.stdout.String(), []string{oauthMark})
			sweep(t, what+" stderr", res.stderr.String(), []string{oauthMark})
		}
	}

	// The daemon: the three as provided session files, and a FIFO where
	// its own copy belongs.
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global: {schedule: \"@every 1s\", timeout: 2s, state_dir: state}\ntargets:\n")
	want := map[string]string{}
	i := 0
	for path, says := range files {
		name := fmt.Sprintf("s%d", i)
		i++
		want[name] = says
		fmt.Fprintf(&cfg, "  - {name: %s, url: %q, manifest: declared.json, oauth: {login: {session_file: %q}}}\n", name, p.endpoint(), path)
	}
	fmt.Fprintf(&cfg, "  - {name: own, url: %q, manifest: declared.json, oauth: {login: {}}}\n", p.endpoint())
	want["own"] = "not a regular file"
	if err := os.MkdirAll(filepath.Join(dir, "state", "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "state", "sessions", "own.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := writeFile(t, dir, "driftd.yml", []byte(cfg.String()))
	d := startDaemon(t, config, "--log.format=json")
	var targets []struct {
		Name    string `json:"name"`
		LastRun *struct {
			FailureReason   string  `json:"failure_reason"`
			DurationSeconds float64 `json:"duration_seconds"`
		} `json:"last_run"`
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		targets = nil
		done := 0
		if r := get(d.base + "/api/v1/targets"); r.err == nil && json.Unmarshal(apiData(r.body), &targets) == nil {
			for _, tg := range targets {
				if tg.LastRun != nil {
					done++
				}
			}
		}
		if done == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d targets finished a run after 20 s:\n%.4000s", done, len(want), d.log.String())
		}
	}
	for _, tg := range targets {
		t.Logf("%s: %q in %.2fs", tg.Name, tg.LastRun.FailureReason, tg.LastRun.DurationSeconds)
		if tg.LastRun.FailureReason != "auth_required" {
			t.Errorf("%s: failure_reason %q, want auth_required", tg.Name, tg.LastRun.FailureReason)
		}
		// The target's own answer carries the last run's message.
		if r := get(d.base + "/api/v1/targets/" + tg.Name); r.err != nil || !strings.Contains(r.body, want[tg.Name]) {
			t.Errorf("%s: the target's answer does not say %q (%v): %.600s", tg.Name, want[tg.Name], r.err, r.body)
		}
		if tg.LastRun.DurationSeconds > 3 {
			t.Errorf("%s: the run took %.2fs, more than the 2 s deadline plus one second", tg.Name, tg.LastRun.DurationSeconds)
		}
	}
	stopping := time.Now()
	d.stop(syscall.SIGTERM)
	if took := time.Since(stopping); took > 10*time.Second {
		t.Errorf("driftd took %v to stop after SIGTERM", took)
	}
	sweep(t, "the log", d.log.String(), []string{oauthMark})
}
