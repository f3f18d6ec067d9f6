package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
)

// TargetInfoLabels are the fixed labels of driftd_target_info. A target's
// configured labels are added to that series, so they must not collide.
var TargetInfoLabels = []string{"target", "classification", "protocol_revision", "server_name", "server_version"}

var (
	labelName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`) })
	fingerprint = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })
)

// issue is one problem with one field, named relative to the value checked
// ("name", "ignore[0].reason"); Parse prefixes it and finds its line.
type issue struct{ field, msg string }

type issues []issue

func (is *issues) add(field, format string, args ...any) {
	*is = append(*is, issue{field, fmt.Sprintf(format, args...)})
}

// check returns the target's problems, without its classification rules:
// in a config file those are global and checked once.
func (t *Target) check() []issue {
	var is issues
	switch {
	case t.Name == "":
		is.add("name", "required")
	case !ValidTargetName(t.Name):
		is.add("name", "%q must match %s", t.Name, targetNamePattern)
	}
	if err := CheckTargetURL(t.URL); err != nil {
		is.add("url", "%v", err)
	}
	if t.Timeout <= 0 {
		is.add("timeout", "%v must be positive", t.Timeout)
	}
	if t.MaxListPages < 1 {
		is.add("max_list_pages", "%d must be at least 1", t.MaxListPages)
	}
	if n := t.MaxResponseBytes.Bytes(); n < 1024 {
		is.add("max_response_bytes", "%d must be at least 1024 (1KiB)", n)
	}
	if n := t.MaxRunBytes.Bytes(); n < 1024 {
		is.add("max_run_bytes", "%d must be at least 1024 (1KiB)", n)
	}
	if t.Environment != "" && !validClass(t.Environment) {
		is.add("environment", "%q must be one of %v", t.Environment, Classes)
	}
	if t.HTTPClient.FollowRedirects {
		is.add("http_client.follow_redirects", "must be false: driftd never follows redirects")
	}
	if err := t.HTTPClient.Validate(); err != nil {
		is.add("http_client", "%v", err)
	}
	is = append(is, t.OAuth.check(&t.HTTPClient)...)
	for i, name := range t.Invoke.Tools {
		// Names are exact and resolve against the declared manifest when
		// the plan is made; no character makes one a pattern.
		if name == "" {
			is.add(fmt.Sprintf("invoke.tools[%d]", i), "empty: name a declared tool exactly")
		}
	}
	for i, name := range t.Invoke.Prompts {
		if name == "" {
			is.add(fmt.Sprintf("invoke.prompts[%d]", i), "empty: name a declared prompt exactly")
		}
	}
	for i, uri := range t.Invoke.Resources {
		if uri == "" {
			is.add(fmt.Sprintf("invoke.resources[%d]", i), "empty: give a declared resource's uri exactly")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Invoke.Arguments)) {
		if !slices.Contains(t.Invoke.Tools, name) {
			is.add("invoke.arguments."+name, "no tool of that name in invoke.tools")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Invoke.PromptArguments)) {
		if !slices.Contains(t.Invoke.Prompts, name) {
			is.add("invoke.prompt_arguments."+name, "no prompt of that name in invoke.prompts")
		}
	}
	if t.Invoke.Execute && !t.Invoke.Named() {
		is.add("invoke.execute", "true with no tool, prompt or resource named: execute is not a wildcard")
	}
	for _, name := range slices.Sorted(maps.Keys(t.Labels)) {
		if msg := checkLabel(name); msg != "" {
			is.add("labels."+name, "%s", msg)
		}
	}
	return append(is, checkPolicy(t.Severity, t.Ignore)...)
}

// checkPolicy checks severity overrides and ignore entries, ids included,
// so that a typo is reported in the first pass, with its line.
func checkPolicy(severity map[string]string, ignores []catalogue.Ignore) []issue {
	var is issues
	for _, id := range slices.Sorted(maps.Keys(severity)) {
		for _, err := range checkSeverity(id, severity[id]) {
			is.add("severity."+id, "%v", err)
		}
	}
	for i, ig := range ignores {
		is = append(is, checkIgnore(fmt.Sprintf("ignore[%d]", i), ig)...)
	}
	return is
}

// CheckSeverity returns what is wrong with a severity override of rule or
// BRK-* grade id to level: the level, the id, or both.
func CheckSeverity(id, level string) []error {
	return checkSeverity(id, level)
}

func checkSeverity(id, level string) []error {
	var errs []error
	if _, ok := catalogue.ParseSeverity(level); !ok {
		errs = append(errs, fmt.Errorf("%q is not ERROR, WARN, INFO or OFF", level))
	}
	_, isRule := catalogue.Lookup(id)
	_, isGrade := catalogue.LookupGrade(id)
	if !isRule && !isGrade {
		errs = append(errs, fmt.Errorf("%q is not a rule or BRK-* grade id (see driftd rules)%s", id, didYouMean(closest(id, severityIDs))))
	}
	return errs
}

// CheckTargetURL says what is wrong with raw as a target's URL, if
// anything: it must be an absolute http(s) URL without credentials. The
// error quotes the URL redacted.
func CheckTargetURL(raw string) error {
	if bare, ok := schemeless(raw); ok {
		return errors.New(noScheme(bare))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q must be an absolute http:// or https:// URL", RedactedURL(raw))
	}
	if u.User != nil {
		// Never echo the URL here: it carries the credentials.
		return errors.New("must not carry credentials; use http_client")
	}
	return nil
}

// schemeless returns raw, redacted, when it is a host (and path) written
// without a scheme. Go's URL parser takes "localhost:8080/mcp" for scheme
// "localhost" and no host, so the usual message would be about a scheme
// nobody wrote.
func schemeless(raw string) (string, bool) {
	if raw == "" || strings.Contains(raw, "://") {
		return "", false
	}
	u, err := url.Parse("http://" + raw)
	if err != nil || u.Host == "" || u.Hostname() == "http" || u.Hostname() == "https" {
		return "", false
	}
	return strings.TrimPrefix(RedactedURL(u.String()), "http://"), true
}

func noScheme(bare string) string {
	return fmt.Sprintf("%q has no scheme; write http://%s or https://%s", bare, bare, bare)
}

func checkLabel(name string) string {
	switch {
	case !labelName().MatchString(name):
		return fmt.Sprintf("%q is not a valid Prometheus label name (%s)", name, labelName())
	case strings.HasPrefix(name, "__"):
		return fmt.Sprintf("%q: label names starting with __ are reserved by Prometheus", name)
	case slices.Contains(TargetInfoLabels, name):
		return fmt.Sprintf("%q collides with a fixed label of driftd_target_info %v", name, TargetInfoLabels)
	}
	return ""
}

// checkIgnore checks an ignore entry, rule id included, so that every
// mistake is reported in one pass with its line: a typo in a rule,
// pointer or fingerprint would otherwise silently never match.
func checkIgnore(at string, ig catalogue.Ignore) []issue {
	var is issues
	if strings.TrimSpace(ig.Reason) == "" {
		is.add(at+".reason", "required: say why the finding is acceptable")
	}
	if ig.Rule == "" && ig.Tool == "" && ig.Pointer == "" && ig.Fingerprint == "" {
		is.add(at, "needs at least one of rule, tool, pointer, fingerprint")
	}
	if r := ig.Rule; r != "" && !strings.HasSuffix(r, "*") {
		if _, ok := catalogue.Lookup(r); !ok {
			is.add(at+".rule", "%q is not in the catalogue (a family prefix ends in *, e.g. MCP-CONF-*)%s", r, didYouMean(closest(r, ruleIDs)))
		}
	}
	if _, err := path.Match(ig.Tool, ""); err != nil {
		is.add(at+".tool", "%q: %v", ig.Tool, err)
	}
	if ig.Pointer != "" && !strings.HasPrefix(ig.Pointer, "/") {
		is.add(at+".pointer", "%q must be a JSON pointer (RFC 6901), starting with /", ig.Pointer)
	}
	if ig.Fingerprint != "" && !fingerprint().MatchString(ig.Fingerprint) {
		is.add(at+".fingerprint", "%q must be 16 lowercase hex digits, as reports print it", ig.Fingerprint)
	}
	if ig.Expires != "" {
		if _, err := time.Parse(time.DateOnly, ig.Expires); err != nil {
			is.add(at+".expires", "%q: want YYYY-MM-DD", ig.Expires)
		}
	}
	return is
}

func checkRule(at string, r ClassificationRule) []issue {
	var is issues
	if r.Match.Regexp == nil || r.Match.String() == "" {
		// An empty pattern matches every host: surely not what was meant.
		is.add(at+".match", "required")
	}
	if !validClass(r.Class) {
		is.add(at+".class", "%q must be one of %v", r.Class, Classes)
	}
	return is
}

// check returns the global section's problems.
func (g *Global) check() []issue {
	var is issues
	if g.Schedule.IsZero() {
		is.add("schedule", "required")
	}
	if g.Timeout <= 0 {
		is.add("timeout", "%v must be positive", g.Timeout)
	}
	if g.MaxListPages < 1 {
		is.add("max_list_pages", "%d must be at least 1", g.MaxListPages)
	}
	if n := g.MaxResponseBytes.Bytes(); n < 1024 {
		is.add("max_response_bytes", "%d must be at least 1024 (1KiB)", n)
	}
	if n := g.MaxRunBytes.Bytes(); n < 1024 {
		is.add("max_run_bytes", "%d must be at least 1024 (1KiB)", n)
	}
	if g.Concurrency < 1 {
		is.add("concurrency", "%d must be at least 1", g.Concurrency)
	}
	if n := g.MaxInflightBytes.Bytes(); !g.MaxInflightBytes.IsZero() && n < 1<<20 {
		is.add("max_inflight_bytes", "%d must be at least 1048576 (1MiB), or left out for a quarter of the container's memory limit", n)
	}
	if g.MaxDiscoveredTargets < 1 {
		is.add("max_discovered_targets", "%d must be at least 1", g.MaxDiscoveredTargets)
	}
	if g.PerToolSeriesLimit < 0 {
		is.add("per_tool_series_limit", "%d must not be negative (0 exports no tool-labelled series)", g.PerToolSeriesLimit)
	}
	if g.StateDir == "" {
		is.add("state_dir", "required")
	}
	if e := g.OTLPEndpoint; e != "" {
		if bare, ok := schemeless(e); ok {
			is.add("otlp_endpoint", "%s", noScheme(bare))
		} else if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			is.add("otlp_endpoint", "%q must be an http:// or https:// URL (OTLP over HTTP), or empty", RedactedURL(e))
		}
	}
	for i, r := range g.Classification {
		is = append(is, checkRule(fmt.Sprintf("classification[%d]", i), r)...)
	}
	return is
}
