package config

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadBadConfigs pairs each file in testdata with the exact errors it
// must produce: file, line, field and message.
func TestLoadBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"bad-unknown-top.yml", []string{":3: scrape_interval: unknown field"}},
		{"bad-unknown-global.yml", []string{":3: global.interval: unknown field"}},
		{"bad-unknown-target.yml", []string{":5: targets[0].timout: unknown field"}},
		{"bad-unknown-http-client.yml", []string{
			":6: targets[0].http_client.authorization.credential_file: unknown field",
			":8: targets[0].http_client.tls_config.ca_fil: unknown field",
		}},
		// yaml.v3 hands each element's errors out in one reused array.
		{"bad-unknown-two-targets.yml", []string{
			":5: targets[0].retries: unknown field\n",
			":9: targets[1].backoff: unknown field",
		}},
		// The typo of a required key is one error, not a second "required".
		{"bad-misspelt-required.yml", []string{
			":2: targets[0].nmae: unknown field; did you mean name?\n",
			":7: targets[1].manifests: unknown field; did you mean manifest?",
		}},
		{"bad-invoke.yml", []string{`:6: targets[0].invoke.tools[1]: empty: name a declared tool exactly`, ":11: targets[1].invoke.execute: true with no tool, prompt or resource named",
			`:16: targets[2].invoke.prompts[1]: empty: name a declared prompt exactly`,
			`:17: targets[2].invoke.resources[0]: empty: give a declared resource's uri exactly`,
			`:19: targets[2].invoke.prompt_arguments.apology: no prompt of that name in invoke.prompts`}},
		{"bad-schedule.yml", []string{
			`:2: global.schedule: "*/61 * * * *": step /61 is wider than the minute field (0-59)`,
			`:7: targets[0].schedule: "every five minutes": expected exactly 5 fields, found 3`,
		}},
		{"bad-every-500ms.yml", []string{`:5: targets[0].schedule: "@every 500ms": interval 500ms is under 1s`}},
		{"bad-duplicate-name.yml", []string{`:8: targets[2].name: "orders" is already used at line 2`}},
		{"bad-name.yml", []string{`:2: targets[0].name: "Orders" must match ^[a-z0-9][a-z0-9_.-]{0,62}$`}},
		// Go's URL parser takes localhost:8080 for a scheme: one error, naming the fix.
		{"bad-url.yml", []string{
			`:3: targets[0].url: "localhost:8080/mcp" has no scheme; write http://localhost:8080/mcp or https://localhost:8080/mcp` + "\n",
			`:6: targets[1].url: "ftp://search.internal/mcp" must be an absolute http:// or https:// URL` + "\n",
			`:9: targets[2].url: "billing.internal/mcp?token=<redacted>" has no scheme; write http://billing.internal/mcp?token=<redacted> or https://billing.internal/mcp?token=<redacted>`,
		}},
		{"bad-typos.yml", []string{
			":2: global.schedual: unknown field; did you mean schedule?\n",
			":7: targets[0].timout: unknown field; did you mean timeout?\n",
			`:8: targets[0].severity.BRK-NOPE: "BRK-NOPE" is not a rule or BRK-* grade id (see driftd rules)` + "\n",
			`:8: targets[0].severity.MCP-DRIFT-TOOL-MISING: "MCP-DRIFT-TOOL-MISING" is not a rule or BRK-* grade id (see driftd rules); did you mean MCP-DRIFT-TOOL-MISSING?` + "\n",
			`:8: targets[0].severity.mcp-drift-title: "mcp-drift-title" is not a rule or BRK-* grade id (see driftd rules); did you mean MCP-DRIFT-TITLE?` + "\n",
			`:10: targets[0].ignore[0].rule: "MCP-DRIFT-ANOTATION" is not in the catalogue (a family prefix ends in *, e.g. MCP-CONF-*); did you mean MCP-DRIFT-ANNOTATION?` + "\n",
			":13: targets[0].http_client.tls_config.ca_fil: unknown field; did you mean ca_file?\n",
			":14: targets[0].invokes: unknown field; did you mean invoke?",
		}},
		{"bad-environment.yml", []string{`:5: targets[0].environment: "prod" must be one of [local dev staging production unknown]`}},
		{"bad-classification.yml", []string{
			":3: global.classification[0].match: \"([a-z\": error parsing regexp: missing closing ]: `[a-z`",
			`:6: global.classification[1].class: "prod" must be one of [local dev staging production unknown]`,
		}},
		{"bad-label-fixed.yml", []string{`:5: targets[0].labels.target: "target" collides with a fixed label of driftd_target_info`}},
		{"bad-label-name.yml", []string{`:6: targets[0].labels.team-name: "team-name" is not a valid Prometheus label name`}},
		{"bad-severity.yml", []string{`:5: targets[0].severity.MCP-DRIFT-ANNOTATION: "CRITICAL" is not ERROR, WARN, INFO or OFF`}},
		{"bad-rule-ids.yml", []string{
			`:5: targets[0].severity.MCP-DRIFT-ANOTATION: "MCP-DRIFT-ANOTATION" is not a rule or BRK-* grade id`,
			`:7: targets[0].ignore[0].rule: "MCP-CONF-NOPE" is not in the catalogue`,
		}},
		{"bad-ignore-reason.yml", []string{":6: targets[0].ignore[0].reason: required"}},
		{"bad-ignore-matcher.yml", []string{":6: targets[0].ignore[0]: needs at least one of rule, tool, pointer, fingerprint"}},
		{"bad-ignore-expires.yml", []string{`:8: targets[0].ignore[0].expires: "31/03/2027": want YYYY-MM-DD`}},
		{"bad-ignore-glob.yml", []string{`:6: targets[0].ignore[0].tool: "debug_[": syntax error in pattern`}},
		{"bad-follow-redirects.yml", []string{":6: targets[0].http_client.follow_redirects: must be false: driftd never follows redirects"}},
		{"bad-tls.yml", []string{":5: targets[0].http_client: at most one of ca, ca_file & ca_ref must be configured"}},
		{"bad-types.yml", []string{
			":2: global.concurrency: want an integer, got !!str `many`",
			":7: targets[0].timeout: want a duration such as 30s, got !!str `soon`",
			`:8: targets[0].max_response_bytes: "lots": want a size such as 16MiB`,
		}},
		{"bad-global-values.yml", []string{
			":2: global.timeout: -1s must be positive",
			":3: global.concurrency: 0 must be at least 1",
			`:4: global.otlp_endpoint: "otel-collector:4318" has no scheme; write http://otel-collector:4318 or https://otel-collector:4318`,
			":5: global.max_inflight_bytes: 65536 must be at least 1048576 (1MiB), or left out for a quarter of the container's memory limit",
		}},
		{"bad-missing.yml", []string{":2: targets[0].manifest: required"}},
		{"bad-baseline.yml", []string{
			`:4: targets[0].baseline: "first-seen" is not a baseline mode (the one mode is "first_seen")`,
			":8: targets[1].baseline: set together with manifest",
		}},
		{"bad-duplicate-key.yml", []string{":5: targets[0].url: duplicate key: already set at line 3"}},
		{"bad-two-documents.yml", []string{":5: a config file holds one YAML document"}},
		// yaml drops a sequence element that fails to decode; the next
		// target must still be named targets[1].
		{"bad-index.yml", []string{
			`:5: targets[0].schedule: "@every 1.5s": interval 1.5s must be a whole number of seconds`,
			":6: targets[0].retries: unknown field",
			`:7: targets[1].name: "Search" must match`,
		}},
		{"bad-syntax.yml", []string{":6: yaml: did not find expected '-' indicator"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			c, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%s) succeeded: %+v", path, c)
			}
			got := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(got, path+w) {
					t.Errorf("error lacks %q:\n%s", path+w, got)
				}
			}
			if n := strings.Count(got, "\n") + 1; n != len(tc.want) {
				t.Errorf("%d errors, want %d:\n%s", n, len(tc.want), got)
			}
		})
	}
}

func TestLoadBaseline(t *testing.T) {
	c, err := Load("testdata/good-baseline.yml")
	if err != nil {
		t.Fatal(err)
	}
	if tg := c.Targets[0]; tg.Baseline != BaselineFirstSeen || tg.Manifest != "" {
		t.Fatalf("target %+v", tg)
	}
	out, err := c.Redacted()
	if err != nil || !strings.Contains(string(out), "baseline: first_seen") || strings.Contains(string(out), "manifest:") {
		t.Fatalf("effective config:\n%s", out)
	}
}

func TestLoadGood(t *testing.T) {
	c, err := Load("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata")
	b, _ := os.ReadFile("testdata/good.yml")
	sum := sha256.Sum256(b)
	if c.Path != "testdata/good.yml" || c.Checksum != hex.EncodeToString(sum[:]) {
		t.Errorf("Path, Checksum = %q, %q", c.Path, c.Checksum)
	}
	g := c.Global
	if g.Schedule.String() != "@every 5m" || g.Timeout != 30*time.Second || g.MaxResponseBytes.Bytes() != 16<<20 ||
		g.Concurrency != 32 || g.PerToolSeriesLimit != 200 || g.StateDir != filepath.Join(dir, "data") {
		t.Errorf("global = %+v", g)
	}
	if len(c.Targets) != 3 {
		t.Fatalf("%d targets", len(c.Targets))
	}
	orders, billing, search := c.Targets[0], c.Targets[1], c.Targets[2]

	if orders.Schedule.String() != "*/2 * * * *" || orders.Timeout != 20*time.Second || orders.MaxListPages != 50 ||
		orders.MaxResponseBytes.Bytes() != 16<<20 || orders.Environment != "production" || orders.Labels["team"] != "payments" {
		t.Errorf("orders = %+v", orders)
	}
	if orders.Manifest != filepath.Join(dir, "manifests/orders.json") {
		t.Errorf("orders.Manifest = %s", orders.Manifest)
	}
	hc := orders.HTTPClient
	if hc.Authorization == nil || hc.Authorization.CredentialsFile != filepath.Join(dir, "secrets/orders-token") {
		t.Errorf("credentials_file not resolved: %+v", hc.Authorization)
	}
	if hc.TLSConfig.CAFile != "/etc/ssl/orders-ca.pem" {
		t.Errorf("absolute ca_file changed: %s", hc.TLSConfig.CAFile)
	}
	if hc.FollowRedirects || !hc.EnableHTTP2 {
		t.Errorf("http_client without the keys: follow_redirects %v, enable_http2 %v; want false, true", hc.FollowRedirects, hc.EnableHTTP2)
	}
	if orders.Severity["MCP-DRIFT-ANNOTATION"] != "ERROR" || len(orders.Ignore) != 1 || orders.Ignore[0].Expires != "2027-03-31" {
		t.Errorf("severity, ignore = %v, %+v", orders.Severity, orders.Ignore)
	}

	if billing.Schedule.String() != "@every 5m" || billing.Timeout != 30*time.Second || billing.MaxResponseBytes.Bytes() != 1<<20 ||
		billing.Manifest != "/srv/manifests/billing.yaml" || strings.Join(billing.ShadowTools, ",") != "create_refund_v2,send_invoice" {
		t.Errorf("billing = %+v", billing)
	}
	if out, err := c.Redacted(); err != nil || !strings.Contains(string(out), "shadow_tools:\n") || !strings.Contains(string(out), "- send_invoice\n") {
		t.Errorf("effective config lost shadow_tools (%v):\n%s", err, out)
	}
	if search.HTTPClient.FollowRedirects || !search.HTTPClient.EnableHTTP2 || search.HTTPClient.Authorization != nil {
		t.Errorf("absent http_client is not the default: %+v", search.HTTPClient)
	}
	for _, tg := range c.Targets {
		if len(tg.Classification) != 1 || tg.Classification[0].Class != "production" ||
			!tg.Classification[0].Match.MatchString("mcp.corp.example.com") || tg.Classification[0].Match.MatchString("corp.example.com.evil") {
			t.Errorf("%s: classification = %+v", tg.Name, tg.Classification)
		}
		if err := tg.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", tg.Name, err)
		}
	}
}

func TestRedacted(t *testing.T) {
	c, err := Load("testdata/good.yml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "MARKER-7f3a") {
		t.Fatalf("secret in redacted config:\n%s", s)
	}
	for _, want := range []string{"<secret>", "credentials_file: " + c.Targets[0].HTTPClient.Authorization.CredentialsFile, "follow_redirects: false", "max_response_bytes: 16MiB", "schedule: '*/2 * * * *'"} {
		if !strings.Contains(s, want) {
			t.Errorf("redacted config lacks %q:\n%s", want, s)
		}
	}
	// Parsed elsewhere, the effective config means the same: paths are
	// absolute, and printing it again changes nothing.
	back, err := Parse(out, filepath.Join(t.TempDir(), "driftd.yml"))
	if err != nil {
		t.Fatalf("redacted config does not parse: %v\n%s", err, s)
	}
	again, err := back.Redacted()
	if err != nil || string(again) != s {
		t.Errorf("not a fixed point (%v):\n%s\n---\n%s", err, s, again)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "# nothing yet\n", "targets: []\n", "global:\n"} {
		c, err := Parse([]byte(in), "driftd.yml")
		if err != nil || len(c.Targets) != 0 || c.Global.Schedule.String() != DefaultSchedule || c.Global.Concurrency != DefaultConcurrency {
			t.Errorf("Parse(%q) = %+v, %v", in, c, err)
		}
	}
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := Load("testdata/bad-global-values.yml")
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("%T is not a joined error", err)
	}
	for _, e := range joined.Unwrap() {
		if ce, ok := e.(*Error); !ok || ce.Line == 0 || ce.Field == "" {
			t.Errorf("%#v: want an *Error with line and field", e)
		}
	}
}
