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
	}
	for _, fam := range []Family{FamilyDrift, FamilyConf, FamilyAuth} {
		fmt.Fprintf(&b, "\n## %s\n\n| rule | severity | names a tool | fires when |\n|---|---|---|---|\n", titles[fam])
		for _, r := range Rules {
			if r.Family != fam {
				continue
			}
			tool := ""
			if r.HasTool {
				tool = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.ID, r.Severity, tool, strings.ReplaceAll(r.Doc, "|", "\\|"))
		}
	}
	return b.String()
}
