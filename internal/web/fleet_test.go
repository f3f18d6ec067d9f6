package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/format"
	"github.com/driftd/driftd/internal/probe"
)

// fleetSource is a fakeSource whose index lists the targets given.
type fleetSource struct {
	*fakeSource
	targets []TargetStatus
}

func (f *fleetSource) Targets() []TargetStatus { return slices.Clone(f.targets) }

// row builds a target as the daemon reports it: health, drift, worst
// severity with counts error/warn/info, and labels "k=v,k=v".
func row(name, health, reason, drift string, counts [3]int, labels string) TargetStatus {
	st := TargetStatus{Name: name, URL: "http://127.0.0.1/" + name, Schedule: "@every 5m", Labels: map[string]string{}}
	st.Health, st.Reason, st.Drift = health, reason, drift
	st.Findings = map[catalogue.Severity]int{catalogue.Error: counts[0], catalogue.Warn: counts[1], catalogue.Info: counts[2]}
	for i, s := range catalogue.Severities {
		if counts[i] > 0 && st.Worst == "" {
			st.Worst = s
		}
	}
	for _, kv := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			st.Labels[k] = v
		}
	}
	return st
}

// testFleet is in configuration order, which is not the worst-first one.
func testFleet() []TargetStatus {
	return []TargetStatus{
		row("a-clean", "up", "", "clean", [3]int{}, "team=payments,environment=prod"),
		row("b-info", "up", "", "drifted", [3]int{0, 0, 2}, "team=payments,environment=prod"),
		row("c-pending", "pending", "", "unknown", [3]int{}, "team=others"),
		row("d-error", "up", "", "drifted", [3]int{1, 0, 0}, "team=payments,environment=staging"),
		row("e-failing", "failing", "timeout", "clean", [3]int{}, "team=others"),
		row("f-error-more", "up", "", "drifted", [3]int{3, 1, 0}, "team=others"),
		row("g-auth", "failing", "auth_required", "unknown", [3]int{}, "team=payments"),
		row("h-warn", "up", "", "drifted", [3]int{0, 2, 0}, "team=payments,environment=prod"),
		row("i-stale", "failing", "connection_refused", "drifted", [3]int{0, 1, 0}, ""),
	}
}

func names(ts []TargetStatus) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestFleetOrderAndFilters(t *testing.T) {
	now := time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Failing first (auth_required too), more findings first within a
		// rank; then drifted by worst severity, pending, clean.
		{"", []string{"i-stale", "e-failing", "g-auth", "f-error-more", "d-error", "h-warn", "b-info", "c-pending", "a-clean"}},
		{"sort=config", []string{"a-clean", "b-info", "c-pending", "d-error", "e-failing", "f-error-more", "g-auth", "h-warn", "i-stale"}},
		{"sort=name&state=clean", []string{"a-clean"}},
		{"state=drifted", []string{"i-stale", "f-error-more", "d-error", "h-warn", "b-info"}},
		{"state=drifted&label=team%3Dpayments", []string{"d-error", "h-warn", "b-info"}},
		{"state=drifted&state=auth_required&label=team%3Dpayments", []string{"g-auth", "d-error", "h-warn", "b-info"}},
		{"state=failing", []string{"i-stale", "e-failing"}},
		{"severity=WARN", []string{"i-stale", "f-error-more", "d-error", "h-warn"}},
		{"severity=error", []string{"f-error-more", "d-error"}},
		{"label=team%3Dpayments&label=environment%3Dprod&label=environment%3Dstaging&state=drifted", []string{"d-error", "h-warn", "b-info"}},
		{"label=environment%3Dprod&label=", []string{"h-warn", "b-info", "a-clean"}},
		{"label=environment%3Dnone", nil},
	} {
		q, _ := url.ParseQuery(tc.query)
		got, v := fleet(testFleet(), parseFleetQuery(q), now, "/p")
		if !slices.Equal(names(got), tc.want) {
			t.Errorf("?%s: %v, want %v", tc.query, names(got), tc.want)
		}
		if v.Total != 9 || v.Shown != len(tc.want) || v.Filtered != strings.Contains(tc.query, "=") && !strings.HasPrefix(tc.query, "sort=config") {
			t.Errorf("?%s: total %d shown %d filtered %v", tc.query, v.Total, v.Shown, v.Filtered)
		}
	}

	_, v := fleet(testFleet(), parseFleetQuery(url.Values{}), now, "/p")
	var summary []string
	for _, s := range v.Summary {
		summary = append(summary, fmt.Sprintf("%d %s %s", s.Count, s.State, s.Href))
	}
	want := []string{"5 drifted /p/?state=drifted", "2 failing /p/?state=failing", "1 auth_required /p/?state=auth_required", "1 pending /p/?state=pending", "1 clean /p/?state=clean"}
	if !slices.Equal(summary, want) {
		t.Errorf("summary %v, want %v", summary, want)
	}
	if len(v.Labels) != 2 || v.Labels[0].Key != "environment" || len(v.Labels[1].Options) != 3 {
		t.Errorf("label filters: %+v", v.Labels)
	}

	for query, want := range map[string]time.Duration{"": 0, "refresh=off": 0, "refresh=30s": 30 * time.Second, "refresh=1s": minRefresh,
		"refresh=48h": maxRefresh, "refresh=60": time.Minute, "refresh=-5s": 0, "refresh=soon": 0} {
		q, _ := url.ParseQuery(query)
		if got := parseFleetQuery(q).Refresh; got != want {
			t.Errorf("?%s: refresh %v, want %v", query, got, want)
		}
	}
	q, _ := url.ParseQuery("state=sideways&severity=LOUD&label=team&sort=random")
	if got := parseFleetQuery(q).Ignored; len(got) != 4 {
		t.Errorf("ignored %v", got)
	}
}

var rowRE = regexp.MustCompile(`<tr data-target="([^"]+)">`)

func TestIndexPage(t *testing.T) {
	src := &fleetSource{fakeSource: &fakeSource{ready: true}, targets: testFleet()}
	srv := httptest.NewServer(New(src, Options{Version: "test", Metrics: http.NotFoundHandler()}))
	t.Cleanup(srv.Close)

	code, body, _ := do(t, "GET", srv.URL+"/?state=drifted&label=team%3Dpayments")
	var rows []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		rows = append(rows, m[1])
	}
	if code != 200 || !slices.Equal(rows, []string{"d-error", "h-warn", "b-info"}) {
		t.Fatalf("%d: rows %v", code, rows)
	}
	for _, want := range []string{
		`>5 drifted</a>`, `>2 failing</a>`, `>1 auth_required</a>`, ` of 9`, `showing 3`,
		`<input type="checkbox" name="state" value="drifted" checked>`,
		`<option value="team=payments" selected>payments</option>`,
		`as of <time datetime="`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("filtered index lacks %q", want)
		}
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("the index refreshes without ?refresh")
	}
	_, body, _ = do(t, "GET", srv.URL+"/?refresh=2s")
	if !strings.Contains(body, `<meta http-equiv="refresh" content="5">`) || !strings.Contains(body, "refreshes every 5s") {
		t.Errorf("?refresh=2s is not bounded to 5s: %.600s", body)
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, " on") && regexp.MustCompile(`\son[a-z]+=`).MatchString(body) {
		t.Error("the index has inline script")
	}
	_, body, _ = do(t, "GET", srv.URL+"/?label=team%3Dnobody")
	if !strings.Contains(body, "No target matches these filters") {
		t.Errorf("empty filter result: %.300s", body)
	}
}

func TestTargetPageFindingsWorstFirst(t *testing.T) {
	fs := []catalogue.Finding{
		{Rule: catalogue.DriftTitle, Severity: catalogue.Info, Tool: "a", Message: "title changed"},
		{Rule: catalogue.DriftToolUndeclared, Severity: catalogue.Warn, Tool: "b", Message: "served, not declared"},
		{Rule: catalogue.DriftToolMissing, Severity: catalogue.Error, Tool: "c", Message: "declared, not served"},
		{Rule: catalogue.DriftAnnotation, Severity: catalogue.Warn, Tool: "d", Message: "hint differs"},
	}
	for i := range fs {
		fs[i].Fingerprint = catalogue.Fingerprint("orders", fs[i])
	}
	srv := serve(t, false, &fakeSource{ready: true, rep: &probe.Report{Target: "orders", Success: true, Findings: fs}})
	_, body, _ := do(t, "GET", srv.URL+"/targets/orders")
	var order []string
	for _, m := range regexp.MustCompile(`<tr class="sev-(\w+)[^"]*"><td>.*?</td><td><code>([^<]+)</code>`).FindAllStringSubmatch(body, -1) {
		order = append(order, m[1]+" "+m[2])
	}
	want := []string{"ERROR " + catalogue.DriftToolMissing, "WARN " + catalogue.DriftAnnotation, "WARN " + catalogue.DriftToolUndeclared, "INFO " + catalogue.DriftTitle}
	if !slices.Equal(order, want) {
		t.Errorf("findings %v, want %v", order, want)
	}
}

func TestRulesPage(t *testing.T) {
	srv := serve(t, false, &fakeSource{ready: true})
	code, body, h := do(t, "GET", srv.URL+"/rules")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("/rules: %d %s", code, h.Get("Content-Type"))
	}
	for _, r := range catalogue.Rules {
		if !strings.Contains(body, `<a href="`+format.RuleURI(r.ID)+`"><code>`+r.ID+`</code></a>`) {
			t.Errorf("/rules lacks %s's link", r.ID)
		}
	}
	if !strings.Contains(body, `href="/api/v1/rules"`) {
		t.Error("/rules does not link the JSON")
	}
	if _, body, _ = do(t, "GET", srv.URL+"/"); !strings.Contains(body, `<a href="/rules">Rules</a>`) {
		t.Error("the nav's Rules link does not open the page")
	}
}

// TestAPIEnvelope: every JSON answer of /api/v1 is {status, data} or
// {status, errorType, error}, as Prometheus' API answers.
func TestAPIEnvelope(t *testing.T) {
	src := &fakeSource{ready: true, rep: &probe.Report{Target: "orders", Success: true}}
	srv := serve(t, true, src)
	for _, tc := range []struct {
		method, path string
		code         int
		errorType    string
	}{
		{"GET", "/api/v1/targets", 200, ""},
		{"GET", "/api/v1/targets/orders", 200, ""},
		{"GET", "/api/v1/targets/orders/history", 200, ""},
		{"GET", "/api/v1/rules", 200, ""},
		{"POST", "/api/v1/targets/orders/probe", 202, ""},
		{"GET", "/api/v1/targets/nope", 404, "not_found"},
		{"GET", "/api/v1/targets/nope/history", 404, "not_found"},
		{"POST", "/api/v1/targets/nope/probe", 404, "not_found"},
		{"GET", "/api/v1/targets/nope/manifest", 404, "not_found"},
		{"GET", "/api/v1/targets/orders/baseline", 409, "conflict"},
		{"POST", "/api/v1/targets/orders/baseline", 409, "conflict"},
	} {
		code, body, _ := do(t, tc.method, srv.URL+tc.path)
		var env struct {
			Status    string          `json:"status"`
			Data      json.RawMessage `json:"data"`
			ErrorType string          `json:"errorType"`
			Error     string          `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil || code != tc.code {
			t.Errorf("%s %s: %d %v %.200s", tc.method, tc.path, code, err, body)
			continue
		}
		ok := env.Status == "success" && len(env.Data) > 0 && env.Error == ""
		if tc.errorType != "" {
			ok = env.Status == "error" && env.ErrorType == tc.errorType && env.Error != ""
		}
		if !ok {
			t.Errorf("%s %s: envelope %.300s", tc.method, tc.path, body)
		}
	}
	empty := httptest.NewServer(New(&fleetSource{fakeSource: src}, Options{Metrics: http.NotFoundHandler()}))
	defer empty.Close()
	if _, body, _ := do(t, "GET", empty.URL+"/api/v1/targets"); !strings.Contains(body, `"data": []`) {
		t.Errorf("no targets: %s", body)
	}
	_, body, _ := do(t, "GET", srv.URL+"/api/v1/targets")
	var targets struct{ Data []TargetStatus }
	if json.Unmarshal([]byte(body), &targets) != nil || len(targets.Data) != 1 || targets.Data[0].Name != "orders" {
		t.Errorf("/api/v1/targets data: %.300s", body)
	}
}
