package catalogue

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Severity orders findings; OFF disables a rule in overrides.
type Severity string

// The severities, most severe first.
const (
	Error Severity = "ERROR"
	Warn  Severity = "WARN"
	Info  Severity = "INFO"
	Off   Severity = "OFF"
)

// Severities lists the reportable severities, most severe first.
var Severities = []Severity{Error, Warn, Info}

// Rank is larger for more severe levels; unknown levels rank 0.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 3
	case Warn:
		return 2
	case Info:
		return 1
	}
	return 0
}

// ParseSeverity accepts ERROR, WARN, INFO and OFF in any case.
func ParseSeverity(s string) (Severity, bool) {
	v := Severity(strings.ToUpper(s))
	switch v {
	case Error, Warn, Info, Off:
		return v, true
	}
	return "", false
}

// Finding is one rule firing. Messages describe what was observed; they
// never quote a credential or a value a tool returned.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Tool     string   `json:"tool"`
	// Kind is set when the finding is about a prompt, resource or
	// resource template (prompt, resource, resource_template); Tool then
	// names it (a resource by its uri). Empty for tools.
	Kind           string `json:"kind,omitempty"`
	Direction      string `json:"direction,omitempty"`
	Pointer        string `json:"pointer"`
	Change         string `json:"change,omitempty"`
	Grade          string `json:"grade,omitempty"`
	Classification string `json:"classification,omitempty"`
	Message        string `json:"message"`
	Fingerprint    string `json:"fingerprint"`
	TraceID        string `json:"trace_id,omitempty"`
	// IgnoreReason is set on ignored findings: the matching entry's reason.
	IgnoreReason string `json:"ignore_reason,omitempty"`
	SpanID       string `json:"span_id,omitempty"`
}

// New returns a finding of rule at its catalogue severity. An id missing
// from the catalogue gets no severity, which the catalogue tests catch.
func New(rule, tool, message string) Finding {
	r := byID[rule]
	return Finding{Rule: rule, Severity: r.Severity, Tool: tool, Message: message}
}

// Identity is what makes two findings of one target the same finding: rule,
// tool, direction, pointer and change, NUL-separated, and the kind when
// there is one (so a tool's identity, and fingerprint, never moved). A run
// reports each identity once, and Fingerprint hashes it.
func (f Finding) Identity() string {
	id := strings.Join([]string{f.Rule, f.Tool, f.Direction, f.Pointer, f.Change}, "\x00")
	if f.Kind != "" {
		id += "\x00" + f.Kind
	}
	return id
}

// Fingerprint is the first 16 hex digits of SHA-256 over the target and
// the finding's Identity, each NUL-terminated: stable across runs and
// restarts (TestFingerprintGolden pins the values).
func Fingerprint(target string, f Finding) string {
	sum := sha256.Sum256([]byte(target + "\x00" + f.Identity() + "\x00"))
	return hex.EncodeToString(sum[:])[:16]
}

// Sort orders findings by severity (most severe first), rule, tool, pointer.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(b.Severity.Rank(), a.Severity.Rank()),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Tool, b.Tool),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Pointer, b.Pointer),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// Counts counts findings per severity. As JSON it is the object of all
// three severities, {"ERROR": n, "INFO": n, "WARN": n}, what a map of them
// was (a map cost half a kilobyte a report, kept for every target).
type Counts struct {
	Error int `json:"ERROR"`
	Info  int `json:"INFO"`
	Warn  int `json:"WARN"`
}

// Of returns the count of sev.
func (c Counts) Of(sev Severity) int {
	switch sev {
	case Error:
		return c.Error
	case Warn:
		return c.Warn
	case Info:
		return c.Info
	}
	return 0
}

// Add counts n more of sev; a severity that is none of the three is not
// counted.
func (c *Counts) Add(sev Severity, n int) {
	switch sev {
	case Error:
		c.Error += n
	case Warn:
		c.Warn += n
	case Info:
		c.Info += n
	}
}

// Summary counts findings per severity.
func Summary(fs []Finding) Counts {
	var c Counts
	for _, f := range fs {
		c.Add(f.Severity, 1)
	}
	return c
}

// MaxPerRule bounds the findings of one rule that a report lists, and so
// a state file, a status page and the finding series: a server serving
// 100,000 undeclared tools yields 100 findings and a count of the rest,
// whatever it does.
const MaxPerRule = 100

// Omitted counts the findings of one rule and severity past MaxPerRule.
type Omitted struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Count    int      `json:"count"`
}

// Cap keeps the first MaxPerRule findings of each rule and severity of the
// sorted fs (so the same ones every run) and counts the rest.
func Cap(fs []Finding) ([]Finding, []Omitted) {
	kept := fs[:0:0]
	var omitted []Omitted
	n := map[[2]string]int{}
	for _, f := range fs {
		k := [2]string{f.Rule, string(f.Severity)}
		if n[k]++; n[k] <= MaxPerRule {
			kept = append(kept, f)
			continue
		}
		if i := len(omitted) - 1; i >= 0 && omitted[i].Rule == f.Rule && omitted[i].Severity == f.Severity {
			omitted[i].Count++
			continue
		}
		omitted = append(omitted, Omitted{Rule: f.Rule, Severity: f.Severity, Count: 1})
	}
	if omitted == nil {
		omitted = []Omitted{}
	}
	return kept, omitted
}

// OmittedCount is the number of findings os stands for.
func OmittedCount(os []Omitted) int {
	n := 0
	for _, o := range os {
		n += o.Count
	}
	return n
}
