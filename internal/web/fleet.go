package web

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/format"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/state"
)

// The index's states (docs/daemon.md#status-pages): what a target is at a
// glance, for the summary line and the state filter. A target can be in
// two (failing with stale findings is failing and drifted).
const (
	stateFailing      = "failing"       // the last run failed, for a reason other than auth_required
	stateAuthRequired = "auth_required" // the last run failed: the server wants credentials driftd lacks
	stateDrifted      = "drifted"       // active findings
	statePending      = "pending"       // no run since start and none recorded
	stateClean        = "clean"         // compared, no active findings, not failing
)

// fleetStates are the states in the order the summary line and the
// filter list them.
var fleetStates = []string{stateDrifted, stateFailing, stateAuthRequired, statePending, stateClean}

// Bounds of ?refresh= and of the label filters the form offers.
const (
	minRefresh = 5 * time.Second
	maxRefresh = time.Hour
	// maxLabelValues is the most values of one label the form offers as a
	// list; a label with more is still filtered by ?label=key=value.
	maxLabelValues = 100
)

// refreshChoices are the intervals the form offers.
var refreshChoices = []string{"10s", "30s", "1m", "5m"}

// targetStates returns the states t is in.
func targetStates(t *TargetStatus) []string {
	var out []string
	switch t.Health {
	case state.HealthFailing:
		if t.Reason == string(mcp.ReasonAuthRequired) {
			out = append(out, stateAuthRequired)
		} else {
			out = append(out, stateFailing)
		}
	case state.HealthPending:
		out = append(out, statePending)
	}
	switch {
	case t.Drift == state.DriftDrifted:
		out = append(out, stateDrifted)
	case t.Drift == state.DriftClean && t.Health != state.HealthFailing:
		out = append(out, stateClean)
	}
	return out
}

// worstRank orders targets worst first: a failing target (auth_required
// included: nothing is known of it now), then drifted by its worst
// severity (ERROR, WARN, INFO), then pending or never compared, then
// clean.
func worstRank(t *TargetStatus) int {
	switch {
	case t.Health == state.HealthFailing:
		return 0
	case t.Drift == state.DriftDrifted:
		return 4 - t.Worst.Rank() // ERROR 1, WARN 2, INFO 3
	case t.Drift == state.DriftClean && t.Health == state.HealthUp:
		return 5
	}
	return 4
}

// compareWorst sorts worst first: by worstRank, then more ERROR, WARN
// and INFO findings, then by name.
func compareWorst(a, b TargetStatus) int {
	if c := cmp.Compare(worstRank(&a), worstRank(&b)); c != 0 {
		return c
	}
	for _, s := range catalogue.Severities {
		if c := cmp.Compare(b.Findings[s], a.Findings[s]); c != 0 {
			return c
		}
	}
	return strings.Compare(a.Name, b.Name)
}

// fleetQuery is the index's view as its URL says it: every filter and
// the order live in the query, so that a link reproduces the view.
type fleetQuery struct {
	// States keeps the targets in any of them (?state=, repeated).
	States []string
	// Severity keeps the targets with an active finding at least this
	// severe (?severity=).
	Severity catalogue.Severity
	// Labels keeps the targets whose label matches one of the values
	// given for it, for every label given (?label=team=payments).
	Labels map[string][]string
	// Sort is worst (the default), name or config (?sort=).
	Sort string
	// Refresh reloads the page this often; 0 is never (?refresh=30s).
	Refresh time.Duration
	// Ignored are the parameters that were not understood, as given.
	Ignored []string
}

func parseFleetQuery(q url.Values) fleetQuery {
	fq := fleetQuery{Sort: "worst", Labels: map[string][]string{}}
	for _, s := range q["state"] {
		switch {
		case s == "":
		case slices.Contains(fleetStates, s):
			if !slices.Contains(fq.States, s) {
				fq.States = append(fq.States, s)
			}
		default:
			fq.Ignored = append(fq.Ignored, "state="+s)
		}
	}
	if s := q.Get("severity"); s != "" {
		if sev, ok := catalogue.ParseSeverity(s); ok && sev != catalogue.Off {
			fq.Severity = sev
		} else {
			fq.Ignored = append(fq.Ignored, "severity="+s)
		}
	}
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, "=")
		switch {
		case l == "":
		case !ok || k == "":
			fq.Ignored = append(fq.Ignored, "label="+l)
		case !slices.Contains(fq.Labels[k], v):
			fq.Labels[k] = append(fq.Labels[k], v)
		}
	}
	switch s := q.Get("sort"); s {
	case "", "worst":
	case "name", "config":
		fq.Sort = s
	default:
		fq.Ignored = append(fq.Ignored, "sort="+s)
	}
	if s := q.Get("refresh"); s != "" && s != "off" {
		d, err := time.ParseDuration(s)
		if n, aerr := strconv.Atoi(s); aerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
		if err != nil || d <= 0 {
			fq.Ignored = append(fq.Ignored, "refresh="+s)
		} else {
			fq.Refresh = min(max(d, minRefresh), maxRefresh)
		}
	}
	return fq
}

// keeps reports whether t passes every filter of q.
func (q *fleetQuery) keeps(t *TargetStatus) bool {
	if len(q.States) > 0 && !slices.ContainsFunc(targetStates(t), func(s string) bool { return slices.Contains(q.States, s) }) {
		return false
	}
	if q.Severity != "" && (t.Drift != state.DriftDrifted || t.Worst.Rank() < q.Severity.Rank()) {
		return false
	}
	for k, vals := range q.Labels {
		v, ok := t.Labels[k]
		if !ok || !slices.Contains(vals, v) {
			return false
		}
	}
	return true
}

// filtered reports whether q drops any target.
func (q *fleetQuery) filtered() bool {
	return len(q.States) > 0 || q.Severity != "" || len(q.Labels) > 0
}

// option is one choice of the index's form.
type option struct {
	Value, Label string
	Selected     bool
}

// summaryItem is one count of the summary line, with the link that
// filters to it.
type summaryItem struct {
	State string
	Count int
	Href  string
}

// labelFilter is the form's list of one label's values.
type labelFilter struct {
	Key     string
	Options []option
}

// fleetView is what the index shows above and in its table.
type fleetView struct {
	Summary []summaryItem
	// Total counts every target, Shown those the filters keep.
	Total, Shown int
	Filtered     bool
	AsOf         time.Time
	Refresh      time.Duration
	Ignored      []string
	States       []option
	Severities   []option
	Labels       []labelFilter
	Sorts        []option
	Refreshes    []option
}

// fleet filters and orders targets as q asks, and describes the whole
// fleet and the form.
func fleet(targets []TargetStatus, q fleetQuery, now time.Time, prefix string) ([]TargetStatus, fleetView) {
	v := fleetView{Total: len(targets), Filtered: q.filtered(), AsOf: now, Refresh: q.Refresh, Ignored: q.Ignored}
	counts := map[string]int{}
	labels := map[string]map[string]bool{}
	var kept []TargetStatus
	for i := range targets {
		t := &targets[i]
		for _, s := range targetStates(t) {
			counts[s]++
		}
		for k, val := range t.Labels {
			if labels[k] == nil {
				labels[k] = map[string]bool{}
			}
			labels[k][val] = true
		}
		if q.keeps(t) {
			kept = append(kept, *t)
		}
	}
	v.Shown = len(kept)
	switch q.Sort {
	case "worst":
		slices.SortStableFunc(kept, compareWorst)
	case "name":
		slices.SortStableFunc(kept, func(a, b TargetStatus) int { return strings.Compare(a.Name, b.Name) })
	}
	for _, s := range fleetStates {
		// drifted and failing are said even at 0: "0 drifted" is news.
		if counts[s] > 0 || s == stateDrifted || s == stateFailing {
			v.Summary = append(v.Summary, summaryItem{s, counts[s], prefix + "/?state=" + s})
		}
		v.States = append(v.States, option{s, s, slices.Contains(q.States, s)})
	}
	v.Severities = []option{{"", "any", q.Severity == ""}}
	for _, s := range catalogue.Severities {
		label := string(s) + " or worse"
		if s == catalogue.Error {
			label = string(s)
		}
		v.Severities = append(v.Severities, option{string(s), label, q.Severity == s})
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		vals := slices.Sorted(maps.Keys(labels[k]))
		if len(vals) > maxLabelValues {
			continue
		}
		lf := labelFilter{Key: k, Options: []option{{"", "any", len(q.Labels[k]) == 0}}}
		for _, val := range vals {
			lf.Options = append(lf.Options, option{k + "=" + val, val, slices.Contains(q.Labels[k], val)})
		}
		v.Labels = append(v.Labels, lf)
	}
	v.Sorts = []option{{"worst", "worst first", q.Sort == "worst"}, {"name", "name", q.Sort == "name"}, {"config", "configuration order", q.Sort == "config"}}
	v.Refreshes = []option{{"off", "off", q.Refresh == 0}}
	for _, r := range refreshChoices {
		d, _ := time.ParseDuration(r)
		v.Refreshes = append(v.Refreshes, option{r, "every " + r, q.Refresh == d})
	}
	if q.Refresh != 0 && !slices.ContainsFunc(v.Refreshes, func(o option) bool { return o.Selected }) {
		v.Refreshes = append(v.Refreshes, option{q.Refresh.String(), "every " + q.Refresh.String(), true})
	}
	return kept, v
}

// sortFindings orders a target's findings for its page: ERROR, then WARN,
// then INFO, each by rule id, the state's order (tool, pointer) kept
// within a rule.
func sortFindings(fs []state.Finding) {
	slices.SortStableFunc(fs, func(a, b state.Finding) int {
		if c := cmp.Compare(b.Severity.Rank(), a.Severity.Rank()); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
}

// ruleRow is one line of the rules page.
type ruleRow struct {
	catalogue.Rule
	// DocURL is the rule's section of docs/rules.md, as SARIF's helpUri
	// links it.
	DocURL string
}

// ruleFamily is one table of the rules page.
type ruleFamily struct {
	Family catalogue.Family
	Rules  []ruleRow
}

func ruleFamilies() []ruleFamily {
	var out []ruleFamily
	for _, fam := range catalogue.Families {
		rf := ruleFamily{Family: fam}
		for _, r := range catalogue.Rules {
			if r.Family == fam {
				rf.Rules = append(rf.Rules, ruleRow{r, format.RuleURI(r.ID)})
			}
		}
		out = append(out, rf)
	}
	return out
}

// rulesPage is GET /rules: the catalogue as a page, each rule linking to
// its documentation; /api/v1/rules serves it as JSON.
func (h *handler) rulesPage(w http.ResponseWriter, _ *http.Request) {
	render(w, rulesTmpl(), page{Title: "Rules", Version: h.opts.Version, Prefix: h.prefix(), Config: h.src.ConfigStatus(),
		Rules: ruleFamilies(), Grades: catalogue.Grades, RulesDoc: format.RulesURI})
}
