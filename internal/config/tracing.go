package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"golang.org/x/net/http/httpguts"
	"gopkg.in/yaml.v3"
)

// The trace exporters a tracing block can name (client_type).
const (
	TracingClientHTTP = "http"
	TracingClientGRPC = "grpc"
)

// TracingClientTypes are the client types this build has, in the order
// errors list them.
var TracingClientTypes = []string{TracingClientHTTP, TracingClientGRPC}

// TracingConfig is the tracing: block (docs/tracing.md), shaped like
// Prometheus' and Alertmanager's: where spans go and how. Tracing is on
// when Endpoint is set. Every field left out is left to the exporter, so
// the OTEL_EXPORTER_OTLP_* environment fills it; a field written here
// wins over the environment.
type TracingConfig struct {
	// ClientType is http (OTLP/HTTP protobuf) or grpc.
	ClientType string `yaml:"client_type,omitempty"`
	// Endpoint is host:port (https, or http with Insecure) or a URL: an
	// http:// or https:// URL says the scheme itself, and for OTLP/HTTP a
	// URL without a path sends to /v1/traces.
	Endpoint string `yaml:"endpoint,omitempty"`
	// SamplingFraction is the share of runs traced, 0 to 1 (default 1),
	// decided once per run: its requests follow the run's span.
	SamplingFraction float64 `yaml:"sampling_fraction"`
	// Insecure sends to a host:port endpoint without TLS.
	Insecure  bool                 `yaml:"insecure,omitempty"`
	TLSConfig promconfig.TLSConfig `yaml:"tls_config,omitempty"`
	// Headers are sent with every export, e.g. a collector's API key:
	// their values are secrets, printed as <secret>.
	Headers map[string]promconfig.Secret `yaml:"headers,omitempty"`
	// Compression is gzip or none.
	Compression string `yaml:"compression,omitempty"`
	// Timeout bounds one export (the exporter's default is 10s).
	Timeout time.Duration `yaml:"timeout,omitempty"`
}

// The compressions a tracing block can name.
const (
	TracingCompressionGzip = "gzip"
	TracingCompressionNone = "none"
)

// DefaultTracingConfig is a tracing block with nothing written: tracing
// off, and every run sampled once an endpoint is set.
func DefaultTracingConfig() TracingConfig {
	return TracingConfig{ClientType: TracingClientHTTP, SamplingFraction: 1}
}

// Enabled reports whether spans are exported: an endpoint is set.
func (t TracingConfig) Enabled() bool { return t.Endpoint != "" }

// IsZero reports whether the block is the default, which prints as no
// block at all.
func (t TracingConfig) IsZero() bool {
	d := DefaultTracingConfig()
	return t.ClientType == d.ClientType && t.Endpoint == "" && t.SamplingFraction == d.SamplingFraction &&
		!t.Insecure && t.TLSConfig == (promconfig.TLSConfig{}) && len(t.Headers) == 0 && t.Compression == "" && t.Timeout == 0
}

// UnmarshalYAML decodes the block over its defaults and checks it, each
// problem placed at the value it is about.
func (t *TracingConfig) UnmarshalYAML(unmarshal func(any) error) error {
	*t = DefaultTracingConfig()
	type plain TracingConfig
	err := unmarshal((*plain)(t))
	te := &yaml.TypeError{}
	if e, ok := err.(*yaml.TypeError); ok {
		te.Errors = append(te.Errors, e.Errors...)
	}
	// Positions only. After a plain error, this call also returns the
	// type errors found before it.
	// (A yaml.Node would come back empty from this form of unmarshal; a
	// map of them has their positions.)
	var self map[string]yaml.Node
	if e, ok := unmarshal(&self).(*yaml.TypeError); ok {
		te.Errors = append(te.Errors, e.Errors...)
	}
	if _, ok := err.(*yaml.TypeError); err != nil && !ok {
		// prometheus/common's tls_config validates while decoding and
		// stops the block there with a plain error; place it.
		t.TLSConfig = promconfig.TLSConfig{}
		te.Errors = append(te.Errors, nodeError(valueNode(self, "tls_config"), "%v", err).Errors...)
	}
	for _, x := range t.check() {
		te.Errors = append(te.Errors, nodeError(valueNode(self, x.field), "%s", x.msg).Errors...)
	}
	if len(te.Errors) > 0 {
		return te
	}
	return nil
}

// valueNode is the value written at field (a key, or headers.NAME) of a
// block whose values are m; an empty node when it is not written.
func valueNode(m map[string]yaml.Node, field string) *yaml.Node {
	key, name, nested := strings.Cut(field, ".")
	n, ok := m[key]
	if !ok {
		return &yaml.Node{}
	}
	for i := 0; nested && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i+1]
		}
	}
	return &n
}

// Validate checks a block built outside a config file (driftd check's
// --otlp-endpoint): every problem, each naming its field.
func (t TracingConfig) Validate() error {
	var errs []error
	for _, x := range t.check() {
		errs = append(errs, fmt.Errorf("%s: %s", x.field, x.msg))
	}
	return errors.Join(errs...)
}

// check returns the block's problems, fields named as written.
func (t TracingConfig) check() []issue {
	var is issues
	if !slices.Contains(TracingClientTypes, t.ClientType) {
		is.add("client_type", "%q is not a client type: want %s%s", t.ClientType, strings.Join(TracingClientTypes, " or "), didYouMean(closest(t.ClientType, TracingClientTypes)))
	}
	scheme := "" // of a URL endpoint
	if e := t.Endpoint; strings.Contains(e, "://") {
		u, err := url.Parse(e)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			is.add("endpoint", "%q must be host:port or an http:// or https:// URL", RedactedURL(e))
		case u.User != nil:
			// Never echo the URL: it carries the credentials.
			is.add("endpoint", "must not carry credentials; send them in headers")
		case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
			is.add("endpoint", "%q must not have a query or fragment", RedactedURL(e))
		case t.ClientType == TracingClientGRPC && strings.Trim(u.Path, "/") != "":
			is.add("endpoint", "%q: a gRPC endpoint has no path", e)
		default:
			scheme = u.Scheme
		}
	} else if e != "" {
		if msg := checkHostPort(e); msg != "" {
			is.add("endpoint", "%s", msg)
		}
	}
	if t.Insecure && scheme == "https" {
		is.add("insecure", "true contradicts the https:// endpoint; use an http:// URL, or host:port with insecure: true")
	}
	if t.TLSConfig != (promconfig.TLSConfig{}) {
		switch {
		case t.Insecure:
			is.add("tls_config", "set together with insecure: true, which sends without TLS")
		case scheme == "http":
			is.add("tls_config", "set, but the endpoint is an http:// URL, sent without TLS")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
		// Never quote a value: it is a secret.
		switch v := string(t.Headers[name]); {
		case !httpguts.ValidHeaderFieldName(name):
			is.add("headers."+name, "%q is not a valid header name", name)
		case reservedTraceHeader(name):
			is.add("headers."+name, "%q is set by the exporter", name)
		case !httpguts.ValidHeaderFieldValue(v):
			is.add("headers."+name, "the value must not contain a line break or other control character")
		}
	}
	switch t.Compression {
	case "", TracingCompressionGzip, TracingCompressionNone:
	default:
		is.add("compression", "%q must be %s or %s", t.Compression, TracingCompressionGzip, TracingCompressionNone)
	}
	if t.Timeout < 0 {
		is.add("timeout", "%v must be positive", t.Timeout)
	}
	if f := t.SamplingFraction; math.IsNaN(f) || f < 0 || f > 1 {
		is.add("sampling_fraction", "%v must be between 0 and 1", f)
	}
	return is
}

// checkHostPort says what is wrong with e as a host:port endpoint.
func checkHostPort(e string) string {
	if strings.Contains(e, "@") {
		// Never echo it: user info carries credentials.
		return "must not carry credentials; send them in headers"
	}
	if bare, ok := schemeless(e); ok && strings.ContainsAny(e, "/?#") {
		return fmt.Sprintf("%q: host:port has no path; write https://%s or http://%s for a URL", bare, bare, bare)
	}
	host, port, err := net.SplitHostPort(e)
	if err != nil {
		host, port = e, ""
	}
	u, perr := url.Parse("//" + e)
	if perr != nil || u.Host != e || host == "" || strings.ContainsAny(e, "/?#") {
		return fmt.Sprintf("%q must be host:port or an http:// or https:// URL", RedactedURL(e))
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("%q: the port must be a number from 1 to 65535", e)
		}
	}
	return ""
}

// reservedTraceHeader reports whether the exporter writes header name
// itself: a configured one would break the request.
func reservedTraceHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Content-Type", "Content-Encoding", "Content-Length", "Transfer-Encoding", "Host", "Te":
		return true
	}
	return false
}

// finishTracing maps the deprecated global.otlp_endpoint onto the tracing
// block, and resolves the block's files against dir.
func (c *Config) finishTracing(col *collector, dir string) {
	if e := c.Global.OTLPEndpoint; e != "" && !col.underBad("global.otlp_endpoint") {
		switch {
		case !c.Tracing.IsZero():
			col.add("global", []issue{{"otlp_endpoint", "set together with the tracing block; move the URL to tracing.endpoint"}})
		case !col.reported("global.otlp_endpoint"):
			c.Tracing.Endpoint = e
			c.Global.OTLPEndpoint = ""
			line := col.pos.line("global.otlp_endpoint")
			c.warnings = append(c.warnings, (&Error{File: c.file, Line: line, Field: "global.otlp_endpoint",
				Msg: "deprecated; write tracing: {endpoint: " + RedactedURL(e) + "} (docs/tracing.md)"}).Error())
		}
	}
	c.Tracing.TLSConfig.SetDirectory(dir)
}

// reported reports whether a problem was found at field.
func (c *collector) reported(field string) bool {
	return slices.ContainsFunc(c.errs, func(e *Error) bool { return e.Field == field })
}

// Warnings are what the file does that still works but should change,
// such as a deprecated key, each FILE:LINE: FIELD: message.
func (c *Config) Warnings() []string { return c.warnings }
