package config

import (
	"regexp"
	"strings"
	"testing"

	promconfig "github.com/prometheus/common/config"

	"github.com/driftd/driftd/internal/catalogue"
)

func TestTargetValidate(t *testing.T) {
	ok := NewTarget("orders", "https://orders.internal/mcp")
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid target: %v", err)
	}
	if ok.Schedule.String() != DefaultSchedule || ok.HTTPClient.FollowRedirects {
		t.Fatalf("NewTarget defaults: schedule %q, follow_redirects %v", ok.Schedule, ok.HTTPClient.FollowRedirects)
	}
	for _, tc := range []struct {
		change func(*Target)
		want   string
	}{
		{func(t *Target) { t.Name = "Orders!" }, `name: "Orders!" must match`},
		{func(t *Target) { t.URL = "ftp://x/mcp" }, "absolute http:// or https:// URL"},
		{func(t *Target) { t.URL = "https://user:pw@x/mcp" }, "must not carry credentials"},
		{func(t *Target) { t.Timeout = 0 }, "timeout: 0s must be positive"},
		{func(t *Target) { t.MaxListPages = 0 }, "max_list_pages: 0 must be at least 1"},
		{func(t *Target) { t.MaxResponseBytes = NewByteSize(10) }, "max_response_bytes: 10 must be at least 1024"},
		{func(t *Target) { t.Environment = "prod" }, `environment: "prod" must be one of`},
		{func(t *Target) { t.HTTPClient.FollowRedirects = true }, "http_client.follow_redirects: must be false"},
		{func(t *Target) { t.Classification = []ClassificationRule{{Class: "production"}} }, "classification[0].match: required"},
		{func(t *Target) { t.Labels = map[string]string{"server_name": "x"} }, "labels.server_name: \"server_name\" collides"},
		{func(t *Target) { t.Severity = map[string]string{"MCP-DRIFT-TITLE": "loud"} }, `severity.MCP-DRIFT-TITLE: "loud" is not`},
		{func(t *Target) { t.Ignore = []catalogue.Ignore{{Fingerprint: "3F9C", Reason: "x"}} }, `ignore[0].fingerprint: "3F9C" must be 16 lowercase hex digits`},
		{func(t *Target) {
			t.Invoke = Invoke{Tools: []string{"a"}, Arguments: map[string]map[string]any{"b": {}}}
		}, `invoke.arguments.b: no tool of that name in invoke.tools`},
		{func(t *Target) {
			t.HTTPClient.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{"Authorization": {Values: []string{"x"}}}}
		}, `setting header "Authorization" is not allowed`},
	} {
		tg := NewTarget("orders", "https://orders.internal/mcp")
		tc.change(&tg)
		err := tg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
}

// TestValidTargetName holds the written-out check to the documented
// pattern, over every short name of a small alphabet and some long ones.
func TestValidTargetName(t *testing.T) {
	re := regexp.MustCompile(targetNamePattern)
	alphabet := []string{"a", "z", "0", "9", "_", ".", "-", "A", " ", "é", "/"}
	var names []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		names = append(names, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, n-1)
		}
	}
	grow("", 3)
	for _, n := range []int{62, 63, 64, 100} {
		names = append(names, strings.Repeat("a", n), "a"+strings.Repeat("-", n-1), strings.Repeat("a", n-1)+"A")
	}
	for _, name := range names {
		if got, want := ValidTargetName(name), re.MatchString(name); got != want {
			t.Errorf("ValidTargetName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
}
