package catalogue

import (
	"fmt"
	"strings"
)

// Markdown renders the catalogue as docs/rules.md. A test keeps the file
// equal to it.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# Rule catalogue\n\n")
	b.WriteString("Generated from `internal/catalogue` (`go test ./internal/catalogue -update` rewrites it).\n")
	b.WriteString("`driftd rules` prints the same table. Severities are defaults; ")
	b.WriteString("MCP-AUTH-ANONYMOUS-LIST and MCP-AUTH-PLAINTEXT-TRANSPORT are graded by the target's classification.\n")
	titles := map[Family]string{
		FamilyDrift: "MCP-DRIFT — the manifest against the server",
		FamilyConf:  "MCP-CONF — the server against the specification",
		FamilyAuth:  "MCP-AUTH — who the server will talk to",
		FamilySec:   "MCP-SEC — tool-poisoning posture",
	}
	intros := map[Family]string{
		FamilySec: "Offline detectors over every server-controlled text of the served surface; findings cite field, pointer and byte offset, never the text. " +
			"What each detects, why, its false-positive count on the benign corpus and how to override it: [security.md](security.md).\n\n",
	}
	for _, fam := range Families {
		fmt.Fprintf(&b, "\n## %s\n\n%s| rule | severity | names a tool | fires when | emitted by |\n|---|---|---|---|---|\n", titles[fam], intros[fam])
		for _, r := range Rules {
			if r.Family != fam {
				continue
			}
			tool := ""
			if r.HasTool {
				tool = "yes"
			}
			fmt.Fprintf(&b, "| <a id=\"%s\"></a>`%s` | %s | %s | %s | `%s` |\n", Anchor(r.ID), r.ID, r.Severity, tool, strings.ReplaceAll(r.Doc, "|", "\\|"), r.Emitter)
		}
	}
	b.WriteString("\n## BRK — grades: does a schema change break consumers?\n\n")
	b.WriteString("A breaking grade makes an `MCP-DRIFT-SCHEMA` finding, a compatible one `MCP-DRIFT-SCHEMA-COMPATIBLE`; ")
	b.WriteString("the finding's severity is the grade's (override it with `severity: {BRK-…: LEVEL}`). See docs/schema-diff.md.\n\n")
	b.WriteString("| grade | breaking | severity | meaning |\n|---|---|---|---|\n")
	for _, g := range Grades {
		brk := "no"
		if g.Breaking {
			brk = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", g.ID, brk, g.Severity, g.Doc)
	}
	b.WriteString("\n## CHG — schema changes and their grade per direction\n\n")
	b.WriteString("| change | what changed | input grade | output grade |\n|---|---|---|---|\n")
	for _, c := range Changes {
		in := "`" + c.Input + "`"
		if c.InputOpen != "" {
			in += " (`" + c.InputOpen + "` when other properties are still allowed)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` |\n", c.ID, c.Doc, in, c.Output)
	}
	return b.String()
}

// Anchor is the id of rule id's row in docs/rules.md, what SARIF's
// helpUri and the Markdown summary link to: the id in lower case.
func Anchor(id string) string { return strings.ToLower(id) }

// Document is the catalogue as `driftd rules --json` and /api/v1/rules
// serve it.
type Document struct {
	Rules   []Rule       `json:"rules"`
	Grades  []Grade      `json:"grades"`
	Changes []ChangeKind `json:"changes"`
}

// Catalogue returns the whole catalogue.
func Catalogue() Document { return Document{Rules, Grades, Changes} }
