package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

const dashboardPath = "../grafana/driftd.json"

type dashboard struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Datasource *datasourceRef `json:"datasource"`
	GridPos    *struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Datasource *datasourceRef `json:"datasource"`
		Expr       string         `json:"expr"`
		RefID      string         `json:"refId"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a row's collapsed panels
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
	Datasource *datasourceRef  `json:"datasource"`
}

// query returns a variable's query, a string or {"query": "…"}.
func (v variable) query() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &o)
	return o.Query
}

// Values substituted for Grafana's variables before parsing: what Grafana
// itself would put there (durations for intervals, a regex for a multi-value
// variable in a =~ matcher).
var builtinVars = map[string]string{
	"__rate_interval": "2m",
	"__interval":      "30s",
	"__interval_ms":   "30000",
	"__range":         "6h",
	"__range_s":       "21600",
	"__range_ms":      "21600000",
}

// $var, ${var}, ${var:format}, [[var]]
var varRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]`)

func substitute(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(expr, func(m string) string {
		sub := varRef.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		if v, ok := vars[name]; ok {
			return v
		}
		missing = append(missing, name)
		return m
	})
	if len(missing) > 0 {
		return out, fmt.Errorf("undefined variables %v", missing)
	}
	return out, nil
}

func loadDashboard(t *testing.T) *dashboard {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	// The whole file must be valid JSON; the fields read here strictly typed.
	if !json.Valid(raw) {
		t.Fatalf("%s is not valid JSON", dashboardPath)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return &d
}

func TestGrafanaDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard needs a uid and a title")
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: want a current one (>= 36, datasource refs by uid)", d.SchemaVersion)
	}

	// Variables.
	vars := map[string]string{}
	for k, v := range builtinVars {
		vars[k] = v
	}
	byName := map[string]variable{}
	for _, v := range d.Templating.List {
		byName[v.Name] = v
		switch v.Type {
		case "interval", "custom", "constant":
			vars[v.Name] = "1h"
		default:
			vars[v.Name] = ".*"
		}
	}
	if ds, ok := byName["datasource"]; !ok || ds.Type != "datasource" || ds.query() != "prometheus" {
		t.Errorf("want a variable datasource of type datasource with query prometheus, have %+v", ds)
	}
	vars["datasource"] = "prometheus"
	tv, ok := byName["target"]
	if !ok || tv.Type != "query" {
		t.Fatalf("want a query variable target, have %+v", tv)
	}
	if q := tv.query(); q != `label_values(driftd_target_info{job=~"$job"}, target)` {
		t.Errorf(`target variable query %q, want label_values(driftd_target_info{job=~"$job"}, target)`, q)
	}
	for _, name := range []string{"job", "cluster"} {
		if v, ok := byName[name]; !ok || v.Type != "query" || !strings.HasPrefix(v.query(), "label_values(driftd_build_info") {
			t.Errorf("want a query variable %s over driftd_build_info, have %+v", name, v)
		}
	}
	if tv.Datasource == nil || tv.Datasource.UID != "${datasource}" {
		t.Errorf("target variable datasource %+v, want uid ${datasource}", tv.Datasource)
	}
	// label_values(METRIC, LABEL): METRIC is a selector driftd exports, LABEL one of its labels.
	for _, v := range d.Templating.List {
		q := v.query()
		m := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`).FindStringSubmatch(q)
		if v.Type != "query" {
			continue
		}
		if m == nil {
			t.Errorf("variable %s: query %q: want label_values(METRIC, LABEL)", v.Name, q)
			continue
		}
		names, err := exprMetrics(m[1], false)
		if err != nil {
			t.Errorf("variable %s: %v", v.Name, err)
			continue
		}
		for _, n := range names {
			if !slices.Contains(exported[n], m[2]) && !slices.Contains(scrapeLabels, m[2]) {
				t.Errorf("variable %s: %s has no label %q", v.Name, n, m[2])
			}
		}
	}

	// Panels.
	used := map[string]bool{}
	ids := map[int]string{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if p.ID == 0 {
				t.Errorf("%s: no id", where)
			} else if other, dup := ids[p.ID]; dup {
				t.Errorf("%s: id also used by %q", where, other)
			}
			ids[p.ID] = p.Title
			if p.Title == "" {
				t.Errorf("%s: no title", where)
			}
			if g := p.GridPos; g == nil || g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
				t.Errorf("%s: gridPos %+v outside the 24-column grid", where, p.GridPos)
			}
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if p.Type == "text" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("%s: datasource %+v, want uid ${datasource}", where, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no queries", where)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				w := fmt.Sprintf("%s query %s", where, tg.RefID)
				if tg.RefID == "" || refs[tg.RefID] {
					t.Errorf("%s: refId empty or repeated", w)
				}
				refs[tg.RefID] = true
				if tg.Datasource != nil && tg.Datasource.UID != "${datasource}" {
					t.Errorf("%s: datasource %+v, want uid ${datasource}", w, tg.Datasource)
				}
				expr, err := substitute(tg.Expr, vars)
				if err != nil {
					t.Errorf("%s: %q: %v", w, tg.Expr, err)
					continue
				}
				names, err := exprMetrics(expr, false)
				if err != nil {
					t.Errorf("%s: %v", w, err)
					continue
				}
				for _, n := range names {
					used[n] = true
				}
				if err := checkHistogramQuantiles(expr); err != nil {
					t.Errorf("%s: %v", w, err)
				}
			}
		}
	}
	walk(d.Panels)

	// What the dashboard is for: each of these must be shown somewhere.
	for _, m := range []string{
		"driftd_targets", "driftd_target_info", "driftd_probe_success",
		"driftd_findings", "driftd_finding",
		"driftd_probe_duration_seconds_bucket",
		"driftd_findings_opened_total", "driftd_findings_resolved_total",
		"driftd_tools", "driftd_config_last_reload_successful",
		"driftd_probes_total", "driftd_probe_failures_total",
	} {
		if !used[m] {
			t.Errorf("no panel queries %s", m)
		}
	}
	var unused []string
	for m := range exported {
		if !used[m] {
			unused = append(unused, m)
		}
	}
	slices.Sort(unused)
	t.Logf("metrics the dashboard does not show: %s", strings.Join(unused, ", "))
}

// histogram_quantile over buckets must keep the le label in its aggregation.
func checkHistogramQuantiles(expr string) error {
	e, err := promql.ParseExpr(expr)
	if err != nil {
		return err
	}
	var bad []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		c, ok := n.(*parser.Call)
		if !ok || c.Func.Name != "histogram_quantile" || len(c.Args) != 2 {
			return nil
		}
		arg := c.Args[1]
		for {
			p, ok := arg.(*parser.ParenExpr)
			if !ok {
				break
			}
			arg = p.Expr
		}
		if a, ok := arg.(*parser.AggregateExpr); ok {
			if a.Without == slices.Contains(a.Grouping, "le") {
				bad = append(bad, a.String())
			}
		}
		return nil
	})
	if len(bad) > 0 {
		return fmt.Errorf("histogram_quantile over an aggregation that drops le: %v", bad)
	}
	return nil
}

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"target": ".*", "__rate_interval": "2m"}
	got, err := substitute(`rate(x{target=~"$target"}[$__rate_interval]) + y{target=~"${target:regex}"} + [[target]]`, vars)
	if err != nil || got != `rate(x{target=~".*"}[2m]) + y{target=~".*"} + .*` {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := substitute(`x[$nope]`, vars); err == nil {
		t.Fatal("an undefined variable was accepted")
	}
}
