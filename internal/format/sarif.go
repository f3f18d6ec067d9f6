package format

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
)

// SARIF's $schema and version: 2.1.0 with its errata, as OASIS publishes it.
const (
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	sarifVersion = "2.1.0"
)

// The ids of driftd's SARIF notifications (tool.driver.notifications):
// not rules, since nothing in a server fired them.
const (
	noteProbeFailed = "driftd/probe-failed"
	noteOmitted     = "driftd/findings-omitted"
	noteStaleIgnore = "driftd/stale-ignore"
)

// FingerprintKey names driftd's fingerprint in partialFingerprints.
const FingerprintKey = "driftdFingerprint/v1"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool         `json:"tool"`
	AutomationDetails sarifAutomation   `json:"automationDetails"`
	Invocations       []sarifInvocation `json:"invocations"`
	Results           []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string            `json:"name"`
	Version        string            `json:"version"`
	InformationURI string            `json:"informationUri"`
	Rules          []sarifDescriptor `json:"rules"`
	Notifications  []sarifDescriptor `json:"notifications"`
}

type sarifDescriptor struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name,omitempty"`
	ShortDescription     *sarifMessage  `json:"shortDescription,omitempty"`
	FullDescription      *sarifMessage  `json:"fullDescription,omitempty"`
	Help                 *sarifMessage  `json:"help,omitempty"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration *sarifConfig   `json:"defaultConfiguration,omitempty"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifInvocation struct {
	ExecutionSuccessful            bool                `json:"executionSuccessful"`
	StartTimeUTC                   string              `json:"startTimeUtc,omitempty"`
	ToolExecutionNotifications     []sarifNotification `json:"toolExecutionNotifications,omitempty"`
	ToolConfigurationNotifications []sarifNotification `json:"toolConfigurationNotifications,omitempty"`
}

type sarifNotification struct {
	Descriptor     sarifReference  `json:"descriptor"`
	AssociatedRule *sarifReference `json:"associatedRule,omitempty"`
	Level          string          `json:"level"`
	Message        sarifMessage    `json:"message"`
}

type sarifReference struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifMessage       `json:"message"`
	Locations           []sarifLocation    `json:"locations,omitempty"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          map[string]string  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s catalogue.Severity) string {
	switch s {
	case catalogue.Error:
		return "error"
	case catalogue.Warn:
		return "warning"
	}
	return "note"
}

// SARIF writes run as a SARIF 2.1.0 log: one reportingDescriptor per
// catalogue rule, a result per finding (ignored ones with an external
// suppression carrying the ignore's reason), located in the manifest
// files; stale ignores are tool configuration notifications, a failed
// probe and findings past the per-rule cap tool execution notifications.
func SARIF(w io.Writer, run *Run) error {
	rep := run.Report
	index := map[string]int{}
	rules := make([]sarifDescriptor, len(catalogue.Rules))
	for i, r := range catalogue.Rules {
		index[r.ID] = i
		rules[i] = ruleDescriptor(r)
	}
	locs := newLocators(run.Files)
	results := []sarifResult{}
	for _, f := range rep.Findings {
		results = append(results, run.sarifResult(f, index, locs))
	}
	for _, f := range rep.Ignored {
		res := run.sarifResult(f, index, locs)
		res.Suppressions = []sarifSuppression{{Kind: "external", Justification: f.IgnoreReason}}
		results = append(results, res)
	}
	inv := sarifInvocation{ExecutionSuccessful: rep.Success}
	if !rep.StartedAt.IsZero() {
		inv.StartTimeUTC = rep.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if !rep.Success {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Descriptor: sarifReference{noteProbeFailed, 0}, Level: "error",
			Message: sarifMessage{Text: sarifText(fmt.Sprintf("probe failed (%s): %s; nothing was compared", rep.FailureReason, rep.FailureMessage))},
		})
	}
	for _, o := range rep.FindingsOmitted {
		n := sarifNotification{
			Descriptor: sarifReference{noteOmitted, 1}, Level: sarifLevel(o.Severity),
			Message: sarifMessage{Text: sarifText(fmt.Sprintf("%d more %s findings of %s not listed (at most %d per rule)", o.Count, o.Severity, o.Rule, catalogue.MaxPerRule))},
		}
		if i, ok := index[o.Rule]; ok {
			n.AssociatedRule = &sarifReference{o.Rule, i}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	for _, s := range rep.StaleIgnores {
		inv.ToolConfigurationNotifications = append(inv.ToolConfigurationNotifications, sarifNotification{
			Descriptor: sarifReference{noteStaleIgnore, 2}, Level: "warning",
			Message: sarifMessage{Text: sarifText("stale ignore (" + s.Why + "): " + ignoreText(s.Ignore))},
		})
	}
	log := sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{{
		Tool: sarifTool{Driver: sarifDriver{
			Name: "driftd", Version: run.Version, InformationURI: ProjectURI, Rules: rules,
			Notifications: []sarifDescriptor{
				{ID: noteProbeFailed, ShortDescription: &sarifMessage{Text: "the target could not be probed; nothing was compared (exit code 3)"}},
				{ID: noteOmitted, ShortDescription: &sarifMessage{Text: "findings of one rule past the per-rule cap are counted, not listed"}},
				{ID: noteStaleIgnore, ShortDescription: &sarifMessage{Text: "an ignore entry matched no finding, or has expired"}},
			},
		}},
		AutomationDetails: sarifAutomation{ID: "driftd-" + run.Command + "/" + rep.Target + "/"},
		Invocations:       []sarifInvocation{inv},
		Results:           results,
	}}}
	return writeJSON(w, log)
}

func ruleDescriptor(r catalogue.Rule) sarifDescriptor {
	short, _, _ := strings.Cut(r.Doc, "; ")
	uri := RuleURI(r.ID)
	return sarifDescriptor{
		ID:               r.ID,
		Name:             pascal(r.ID),
		ShortDescription: &sarifMessage{Text: sarifText(short)},
		FullDescription:  &sarifMessage{Text: sarifText(r.Doc)},
		Help: &sarifMessage{
			Text: sarifText(fmt.Sprintf("%s fires when %s. Default severity %s. %s", r.ID, r.Doc, r.Severity, uri)),
			// A formatted message carries no HTML (SARIF §3.11.4.2): the
			// tags a rule's text names are escaped.
			Markdown: sarifPlaceholders(fmt.Sprintf("`%s` fires when %s. Default severity %s. [docs/rules.md](%s)", r.ID, escapeText(r.Doc), r.Severity, uri)),
		},
		HelpURI:              uri,
		DefaultConfiguration: &sarifConfig{Level: sarifLevel(r.Severity)},
		Properties:           ruleProperties(r),
	}
}

// ruleProperties are a rule's SARIF properties: its family as a tag and,
// for the MCP-SEC rules, the "security" tag and a security-severity, so
// that code scanning files their results as security alerts (GitHub reads
// the number: 9.0 and up critical, 7.0 high, 4.0 medium, below low).
func ruleProperties(r catalogue.Rule) map[string]any {
	if r.Family != catalogue.FamilySec {
		return map[string]any{"tags": []string{string(r.Family)}}
	}
	score := map[catalogue.Severity]string{catalogue.Error: "8.0", catalogue.Warn: "5.0", catalogue.Info: "2.0"}[r.Severity]
	return map[string]any{"tags": []string{string(r.Family), "security"}, "security-severity": score}
}

// pascal turns MCP-DRIFT-TOOL-MISSING into McpDriftToolMissing, the
// identifier-like name SARIF asks for.
func pascal(id string) string {
	var b strings.Builder
	for _, w := range strings.Split(id, "-") {
		if w != "" {
			b.WriteString(w[:1] + strings.ToLower(w[1:]))
		}
	}
	return b.String()
}

func (run *Run) sarifResult(f catalogue.Finding, index map[string]int, locs []*fileLocator) sarifResult {
	msg := f.Message
	if s := subject(f); s != "" {
		msg = s + ": " + msg
	}
	if f.Grade != "" {
		msg += fmt.Sprintf(" [%s, %s]", f.Change, f.Grade)
	}
	res := sarifResult{
		RuleID:              f.Rule,
		RuleIndex:           -1,
		Level:               sarifLevel(f.Severity),
		Message:             sarifMessage{Text: sarifText(msg)},
		PartialFingerprints: map[string]string{FingerprintKey: f.Fingerprint},
		Properties:          map[string]string{"severity": string(f.Severity), "target": run.Report.Target},
	}
	if i, ok := index[f.Rule]; ok {
		res.RuleIndex = i
	}
	for k, v := range map[string]string{"kind": f.Kind, "direction": f.Direction, "pointer": f.Pointer, "change": f.Change, "grade": f.Grade, "fingerprint": f.Fingerprint} {
		if v != "" {
			res.Properties[k] = v
		}
	}
	if len(locs) > 0 {
		fl, line := locate(locs, f)
		loc := sarifLocation{PhysicalLocation: sarifPhysical{
			ArtifactLocation: sarifArtifact{URI: fileURI(run.WorkDir, fl.file.Path)},
			Region:           sarifRegion{StartLine: line},
		}}
		if f.Tool != "" {
			lk := ""
			if kindOf(f) == "tool" {
				lk = "function"
			}
			loc.LogicalLocations = []sarifLogical{{Name: f.Tool, Kind: lk}}
		}
		res.Locations = []sarifLocation{loc}
	}
	return res
}

// sarifText writes s as a SARIF plain-text message string that is only
// text (SARIF 2.1.0 §3.11.5, §3.11.6): a backslash and a square bracket
// are backslash-escaped, so "[text](url)" from a server is no embedded
// link, and braces are doubled, so "{0}" is no placeholder. Every
// message.text driftd writes passes here; a viewer shows s as it was.
func sarifText(s string) string {
	if !strings.ContainsAny(s, `\[]{}`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '[', ']':
			b.WriteByte('\\')
		case '{', '}':
			b.WriteRune(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sarifPlaceholders doubles the braces of a formatted (Markdown) message
// string, whose links are driftd's own.
func sarifPlaceholders(s string) string {
	return strings.NewReplacer("{", "{{", "}", "}}").Replace(s)
}

// ignoreText describes an ignore entry by the criteria it sets.
func ignoreText(ig catalogue.Ignore) string {
	var parts []string
	for _, kv := range [][2]string{{"rule", ig.Rule}, {"tool", ig.Tool}, {"pointer", ig.Pointer}, {"fingerprint", ig.Fingerprint}, {"expires", ig.Expires}} {
		if kv[1] != "" {
			parts = append(parts, fmt.Sprintf("%s=%q", kv[0], kv[1]))
		}
	}
	return strings.Join(parts, " ") + fmt.Sprintf(" (reason %q)", ig.Reason)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
