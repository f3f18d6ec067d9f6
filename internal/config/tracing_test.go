package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadBadTracing pairs each bad tracing block with the exact errors it
// must produce, as TestLoadBadConfigs does.
func TestLoadBadTracing(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"bad-tracing.yml", []string{
			`:2: tracing.client_type: "htpp" is not a client type: want http or grpc; did you mean http?` + "\n",
			`:3: tracing.endpoint: "otel-collector:4318/v1/traces": host:port has no path; write https://otel-collector:4318/v1/traces or http://otel-collector:4318/v1/traces for a URL` + "\n",
			`:4: tracing.sampling_fraction: 1.5 must be between 0 and 1` + "\n",
			`:6: tracing.headers.Bad Name: "Bad Name" is not a valid header name` + "\n",
			`:7: tracing.headers.Content-Type: "Content-Type" is set by the exporter` + "\n",
			`:8: tracing.compression: "br" must be gzip or none` + "\n",
			`:9: tracing.timeout: -1s must be positive`,
		}},
		{"bad-tracing-tls.yml", []string{
			`:3: tracing.insecure: true contradicts the https:// endpoint; use an http:// URL, or host:port with insecure: true` + "\n",
			`:4: tracing.tls_config: set together with insecure: true, which sends without TLS`,
		}},
		{"bad-tracing-both.yml", []string{
			`:2: global.otlp_endpoint: set together with the tracing block; move the URL to tracing.endpoint`,
		}},
		{"bad-tracing-types.yml", []string{
			`:2: tracing.endpont: unknown field; did you mean endpoint?` + "\n",
			":3: tracing.sampling_fraction: want a number, got !!str `half`\n",
			`:4: tracing.tls_config: at most one of ca, ca_file & ca_ref must be configured`,
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			c, err := Load(path)
			if err == nil {
				t.Fatalf("Load(%s) succeeded: %+v", path, c.Tracing)
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

// TestTracingEndpoints: the forms an endpoint may take, and the message
// for each it may not. No message quotes a credential.
func TestTracingEndpoints(t *testing.T) {
	for _, tc := range []struct{ client, endpoint, want string }{
		{"http", "otel-collector:4318", ""},
		{"http", "otel-collector", ""},
		{"http", "[::1]:4318", ""},
		{"http", "http://otel-collector:4318", ""},
		{"http", "https://api.honeycomb.io/v1/traces", ""},
		{"grpc", "otel-collector:4317", ""},
		{"grpc", "https://otel-collector:4317", ""},
		{"grpc", "https://otel-collector:4317/v1/traces", `"https://otel-collector:4317/v1/traces": a gRPC endpoint has no path`},
		{"http", "ftp://otel-collector", `"ftp://otel-collector" must be host:port or an http:// or https:// URL`},
		{"http", "https://user:SECRET1@otel.example.com", "must not carry credentials; send them in headers"},
		{"http", "https://otel.example.com/v1/traces?api_key=SECRET1", `"https://otel.example.com/v1/traces?api_key=<redacted>" must not have a query or fragment`},
		{"http", "otel-collector:99999", `"otel-collector:99999": the port must be a number from 1 to 65535`},
		{"http", "otel collector:4318", `"otel collector:4318" must be host:port or an http:// or https:// URL`},
		{"http", "user:SECRET1@otel:4318", "must not carry credentials; send them in headers"},
	} {
		cfg := DefaultTracingConfig()
		cfg.ClientType, cfg.Endpoint = tc.client, tc.endpoint
		err := cfg.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if want := "endpoint: " + tc.want; (tc.want == "" && err != nil) || (tc.want != "" && got != want) {
			t.Errorf("%s %q: %v, want %q", tc.client, tc.endpoint, err, want)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("%q: the error quotes a credential: %s", tc.endpoint, got)
		}
	}
}

// TestLoadTracing reads a full block: every field, the CA file resolved
// against the config's directory, and the headers' values printed as
// <secret> in the effective config, which parses back to itself.
func TestLoadTracing(t *testing.T) {
	c, err := Load("testdata/good-tracing.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata")
	tr := c.Tracing
	if !tr.Enabled() || tr.ClientType != TracingClientHTTP || tr.Endpoint != "otel.example.com:4318" || tr.Insecure ||
		tr.Compression != "gzip" || tr.Timeout != 5*time.Second || tr.SamplingFraction != 0.25 {
		t.Errorf("tracing = %+v", tr)
	}
	if tr.TLSConfig.CAFile != filepath.Join(dir, "certs/collector-ca.pem") {
		t.Errorf("ca_file not resolved: %s", tr.TLSConfig.CAFile)
	}
	if tr.Headers["Authorization"] != "Bearer MARKER-7f3a-tracing-token" || tr.Headers["X-Scope-OrgID"] != "acme" {
		t.Errorf("headers = %v", tr.Headers)
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "MARKER-7f3a") || strings.Contains(s, "acme") {
		t.Fatalf("a header value in the effective config:\n%s", s)
	}
	for _, want := range []string{"tracing:\n", "  endpoint: otel.example.com:4318\n", "    Authorization: <secret>\n", "    X-Scope-OrgID: <secret>\n", "  compression: gzip\n", "  timeout: 5s\n", "  sampling_fraction: 0.25\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("effective config lacks %q:\n%s", want, s)
		}
	}
	back, err := Parse(out, filepath.Join(t.TempDir(), "driftd.yml"))
	if err != nil {
		t.Fatalf("effective config does not parse: %v\n%s", err, s)
	}
	if again, err := back.Redacted(); err != nil || string(again) != s {
		t.Errorf("not a fixed point (%v):\n%s\n---\n%s", err, s, again)
	}
}

// TestTracingOff: a file without the block has tracing off, everything
// else the default, and prints no block.
func TestTracingOff(t *testing.T) {
	c, err := Parse([]byte("global: {state_dir: data}\n"), "driftd.yml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Tracing.Enabled() || !c.Tracing.IsZero() || c.Tracing.SamplingFraction != 1 || c.Tracing.ClientType != TracingClientHTTP {
		t.Errorf("tracing = %+v", c.Tracing)
	}
	out, _ := c.Redacted()
	if strings.Contains(string(out), "tracing:") || strings.Contains(string(out), "otlp_endpoint") {
		t.Errorf("effective config prints tracing:\n%s", out)
	}
	// sampling_fraction: 0 is written, so it is not the default.
	c, err = Parse([]byte("tracing: {endpoint: otel:4318, sampling_fraction: 0}\n"), "driftd.yml")
	if err != nil || c.Tracing.SamplingFraction != 0 {
		t.Errorf("sampling_fraction: 0 = %+v, %v", c.Tracing, err)
	}
}

// TestOTLPEndpointDeprecated: global.otlp_endpoint becomes the tracing
// block's endpoint with a warning naming its line, and the effective
// config prints only the block.
func TestOTLPEndpointDeprecated(t *testing.T) {
	c, err := Load("testdata/good-otlp-endpoint.yml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Tracing.Endpoint != "http://otel-collector:4318" || c.Global.OTLPEndpoint != "" || c.Tracing.ClientType != TracingClientHTTP || c.Tracing.SamplingFraction != 1 {
		t.Errorf("tracing = %+v, otlp_endpoint %q", c.Tracing, c.Global.OTLPEndpoint)
	}
	want := "testdata/good-otlp-endpoint.yml:2: global.otlp_endpoint: deprecated; write tracing: {endpoint: http://otel-collector:4318} (docs/tracing.md)"
	if w := c.Warnings(); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want [%q]", w, want)
	}
	out, _ := c.Redacted()
	if strings.Contains(string(out), "otlp_endpoint") || !strings.Contains(string(out), "tracing:\n  client_type: http\n  endpoint: http://otel-collector:4318\n") {
		t.Errorf("effective config:\n%s", out)
	}
	back, err := Parse(out, "driftd.yml")
	if err != nil || len(back.Warnings()) != 0 || back.Tracing.Endpoint != c.Tracing.Endpoint {
		t.Errorf("effective config parsed back: %+v, %v, warnings %q", back.Tracing, err, back.Warnings())
	}
}

// TestTracingDocsExamples: every YAML example of docs/tracing.md is a
// valid config with tracing on.
func TestTracingDocsExamples(t *testing.T) {
	b, err := os.ReadFile("../../docs/tracing.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```yaml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("%d YAML examples in docs/tracing.md", len(blocks))
	}
	for _, block := range blocks {
		example := block[:strings.Index(block, "```")]
		c, err := Parse([]byte(example), "driftd.yml")
		if err != nil || !c.Tracing.Enabled() {
			t.Errorf("example does not load with tracing on (%v):\n%s", err, example)
		}
	}
}
