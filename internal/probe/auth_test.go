package probe_test

import (
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

const marker = "MARKER-5ecr3t-d0-not-leak"

func TestAuthEnforced(t *testing.T) {
	for _, tc := range []struct {
		name, challenge string
		noChallenge     bool
	}{
		{"with challenge", `Bearer resource_metadata="https://auth.example/.well-known/oauth-protected-resource", scope="tools:read"`, false},
		{"without challenge", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), BearerToken: marker, Challenge: tc.challenge})
			defer srv.Close()
			rep := probeOnce(t, srv, declare(t, "a"), withBearer(t, marker))
			if !rep.Success || !has(rep, catalogue.AuthEnforced) || has(rep, catalogue.AuthAnonymousList) {
				t.Fatalf("findings = %+v", rep.Findings)
			}
			if has(rep, catalogue.AuthNoChallenge) != tc.noChallenge {
				t.Fatalf("MCP-AUTH-NO-CHALLENGE present=%v, want %v", has(rep, catalogue.AuthNoChallenge), tc.noChallenge)
			}
			ap := rep.AuthPosture
			if ap.AnonymousList != "refused" || ap.Challenge == nil || ap.Challenge.Status != 401 {
				t.Fatalf("auth_posture = %+v", ap)
			}
			if !tc.noChallenge && (ap.Challenge.ResourceMetadata != "https://auth.example/.well-known/oauth-protected-resource" || ap.Challenge.Scope != "tools:read") {
				t.Fatalf("challenge = %+v", ap.Challenge)
			}
			if !rep.AuthorizationPresented || len(rep.AuthorizationHeaders) != 1 || rep.AuthorizationHeaders[0] != "Authorization" {
				t.Fatalf("authorization_presented=%v headers=%v", rep.AuthorizationPresented, rep.AuthorizationHeaders)
			}
			mustNotContain(t, "report", reportJSON(rep), marker)
		})
	}
}

func TestAnonymousListGradedByClassification(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want catalogue.Severity
	}{
		{"", catalogue.Info}, // 127.0.0.1: local
		{"dev", catalogue.Warn},
		{"unknown", catalogue.Warn},
		{"production", catalogue.Error},
	} {
		t.Run("env="+tc.env, func(t *testing.T) {
			// The server ignores the credentials driftd presents.
			srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b")})
			defer srv.Close()
			rep := probeOnce(t, srv, declare(t, "a", "b"), all(withBearer(t, marker), func(tg *config.Target) { tg.Environment = tc.env }))
			f := find(rep, catalogue.AuthAnonymousList)
			if f == nil || f.Severity != tc.want || f.Classification != rep.Classification.Class {
				t.Fatalf("finding = %+v, want severity %s", f, tc.want)
			}
			if eq := rep.AuthPosture.AnonymousToolsEqual; eq == nil || !*eq {
				t.Fatalf("anonymous_tools_equal = %v", eq)
			}
			mustNotContain(t, "report", reportJSON(rep), marker)
		})
	}
}

func TestAnonymousSeesFewerTools(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b"), OtherConnTools: tools("a")})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a", "b"), withBearer(t, marker))
	if eq := rep.AuthPosture.AnonymousToolsEqual; eq == nil || *eq {
		t.Fatalf("anonymous_tools_equal = %v, want false", eq)
	}
}

func TestSkipAuthProbe(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a")})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), all(withBearer(t, marker), func(tg *config.Target) { tg.SkipAuthProbe = true }))
	if rep.AuthPosture.AnonymousList != "skipped" || len(rep.AuthPosture.Findings) != 0 {
		t.Fatalf("auth_posture = %+v", rep.AuthPosture)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") == "" {
			t.Fatal("an anonymous request was sent despite skip_auth_probe")
		}
	}
}

func TestAuthRequiredWithoutCredentials(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), BearerToken: marker})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a", "b"), nil)
	if rep.Success || rep.FailureReason != mcp.ReasonAuthRequired {
		t.Fatalf("success=%v reason=%s", rep.Success, rep.FailureReason)
	}
	if has(rep, catalogue.DriftToolMissing) || !has(rep, catalogue.AuthEnforced) || rep.AuthPosture.AnonymousList != "refused" {
		t.Fatalf("findings = %+v", rep.Findings)
	}
}

func TestWrongCredentialsFail(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), BearerToken: "the-right-one"})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), withBearer(t, marker))
	if rep.Success || rep.FailureReason != mcp.ReasonAuthRequired || has(rep, catalogue.DriftToolMissing) {
		t.Fatalf("success=%v reason=%s findings=%+v", rep.Success, rep.FailureReason, rep.Findings)
	}
	mustNotContain(t, "report", reportJSON(rep), marker)
}

func TestHeaderSecretsNeverInReport(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a")})
	defer srv.Close()
	rep := probeOnce(t, srv, declare(t, "a"), secretHeader("X-Api-Key", marker))
	if !rep.AuthorizationPresented || rep.AuthorizationHeaders[0] != "X-Api-Key" || rep.AuthPosture.AnonymousList != "served" {
		t.Fatalf("posture = %+v headers=%v", rep.AuthPosture, rep.AuthorizationHeaders)
	}
	anon := 0
	for _, r := range srv.Requests() {
		if r.Header.Get("X-Api-Key") == "" {
			anon++
		} else if r.Header.Get("X-Api-Key") != marker {
			t.Fatalf("X-Api-Key = %q", r.Header.Get("X-Api-Key"))
		}
	}
	if anon == 0 {
		t.Fatal("no request was sent with the configured header stripped")
	}
	mustNotContain(t, "report", reportJSON(rep), marker)
}
