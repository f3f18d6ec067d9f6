package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// WriteText renders a report for a person: a short header, then the
// findings grouped by severity.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "target %s  %s  (%s: %s)\n", r.Target, r.BaseURL, r.Classification.Class, r.Classification.Reason)
	rev := "not claimed"
	if r.ProtocolRevision.Value != nil {
		rev = *r.ProtocolRevision.Value
	}
	server := "unidentified server"
	if r.ServerInfo != nil {
		server = fmt.Sprintf("server %s %s", sanitize.Name(r.ServerInfo.Name), sanitize.Name(r.ServerInfo.Version))
	}
	fmt.Fprintf(&b, "era %s, revision %s, %s\n", r.Era, rev, server)
	if r.Success {
		fmt.Fprintf(&b, "tools: %d declared, %d served in %d page(s); second connection: %s; anonymous list: %s\n",
			r.Tools.Declared, r.Tools.Served, r.Tools.Pages, r.Tools.SecondConnection, r.AuthPosture.AnonymousList)
		for _, k := range mcp.ItemKinds {
			if c := r.countsOf(k); c != nil {
				fmt.Fprintf(&b, "%s: %d declared, %d served in %d page(s); second connection: %s\n",
					k.Key(), c.Declared, c.Served, c.Pages, c.SecondConnection)
			}
		}
	} else {
		fmt.Fprintf(&b, "probe failed (%s): %s\n", r.FailureReason, r.FailureMessage)
	}
	if inv := r.Invocation; inv != nil {
		switch {
		case inv.Refused != "":
			fmt.Fprintf(&b, "invocation refused, nothing sent: %s\n", inv.Refused)
		case !inv.Executed:
			fmt.Fprintf(&b, "invocation plan (seed %d), not executed: add --execute to send it\n", inv.Seed)
		default:
			fmt.Fprintf(&b, "invocation executed (seed %d)\n", inv.Seed)
		}
		for _, pc := range inv.Planned {
			switch {
			case pc.Error != "":
				fmt.Fprintf(&b, "  %s: %s\n", pc.Tool, pc.Error)
			case pc.Outcome != "":
				fmt.Fprintf(&b, "  %s %s → %s\n", pc.Tool, pc.Arguments, pc.Outcome)
			default:
				fmt.Fprintf(&b, "  %s %s\n", pc.Tool, pc.Arguments)
			}
		}
		for _, pr := range inv.Reads {
			writeRead(&b, pr)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return WriteFindings(w, r)
}

// WriteFindings renders a report's findings grouped by severity, then what
// was ignored and which ignore entries are stale, then the counts.
func WriteFindings(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, sev := range catalogue.Severities {
		var group []catalogue.Finding
		for _, f := range r.Findings {
			if f.Severity == sev {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%d)\n", sev, r.Summary.Of(sev))
		for _, f := range group {
			subject := f.Tool
			if f.Kind != "" {
				subject = mcp.Kind(f.Kind).Noun() + " " + subject
			}
			if f.Pointer != "" {
				subject += " " + f.Pointer
			}
			if subject != "" {
				subject = " " + subject + ":"
			}
			grade := ""
			if f.Grade != "" {
				grade = fmt.Sprintf(" [%s, %s]", f.Change, f.Grade)
			}
			fmt.Fprintf(&b, "  %s%s %s%s\n", f.Rule, subject, f.Message, grade)
		}
		for _, o := range r.FindingsOmitted {
			if o.Severity == sev {
				fmt.Fprintf(&b, "  %s: %d more not listed (at most %d per rule)\n", o.Rule, o.Count, catalogue.MaxPerRule)
			}
		}
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(&b, "\nignored (%d)\n", len(r.Ignored)+r.IgnoredOmitted)
		for _, f := range r.Ignored {
			fmt.Fprintf(&b, "  %s %s %s: %s\n", f.Rule, f.Tool, f.Pointer, f.IgnoreReason)
		}
		if r.IgnoredOmitted > 0 {
			fmt.Fprintf(&b, "  %d more not listed\n", r.IgnoredOmitted)
		}
	}
	for _, s := range r.StaleIgnores {
		fmt.Fprintf(&b, "stale ignore (%s): rule=%q tool=%q pointer=%q fingerprint=%q reason=%q\n", s.Why, s.Rule, s.Tool, s.Pointer, s.Fingerprint, s.Reason)
	}
	fmt.Fprintf(&b, "\n%d ERROR, %d WARN, %d INFO\n", r.Summary.Error, r.Summary.Warn, r.Summary.Info)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRead renders one planned prompts/get or resources/read: what it
// sends and, once executed, its outcome, item count and size; never what
// the server returned.
func writeRead(b *strings.Builder, pr PlannedRead) {
	fmt.Fprintf(b, "  %s %s", pr.method(), pr.Name)
	if pr.Kind == string(mcp.KindPrompt) {
		args, _ := json.Marshal(pr.Arguments)
		if pr.Arguments == nil {
			args = []byte("{}")
		}
		fmt.Fprintf(b, " %s", args)
	}
	switch {
	case pr.Outcome != "":
		fmt.Fprintf(b, " → %s", pr.Outcome)
		if pr.Items != nil {
			fmt.Fprintf(b, " (%s: %d, %d bytes)", resultKey(mcp.Kind(pr.Kind)), *pr.Items, pr.Bytes)
		}
	case pr.Error != "":
		fmt.Fprintf(b, ": %s", pr.Error)
	}
	b.WriteString("\n")
}
