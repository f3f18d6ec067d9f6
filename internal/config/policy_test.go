package config

import (
	"testing"
)

// TestLoadPolicy: an --ignore-file gets a config's checks, all in one
// pass, each with its line, and the same suggestions.
func TestLoadPolicy(t *testing.T) {
	_, err := LoadPolicy("testdata/bad-policy.yml")
	want := `testdata/bad-policy.yml:2: severity.MCP-DRIFT-TOOL-MISING: "MCP-DRIFT-TOOL-MISING" is not a rule or BRK-* grade id (see driftd rules); did you mean MCP-DRIFT-TOOL-MISSING?
testdata/bad-policy.yml:3: severity.MCP-DRIFT-TITLE: "LOUD" is not ERROR, WARN, INFO or OFF
testdata/bad-policy.yml:5: ignore[0].rule: "MCP-DRIFT-ANOTATION" is not in the catalogue (a family prefix ends in *, e.g. MCP-CONF-*); did you mean MCP-DRIFT-ANNOTATION?
testdata/bad-policy.yml:8: ignore[1].reasn: unknown field; did you mean reason?
testdata/bad-policy.yml:9: ignores: unknown field; did you mean ignore?`
	if err == nil || err.Error() != want {
		t.Errorf("LoadPolicy = %v\nwant\n%s", err, want)
	}
	p, err := ParsePolicy([]byte("severity: {BRK-UNPROVABLE: error}\nignore:\n  - {rule: MCP-CONF-*, reason: later}\n"), "ok.yml")
	if err != nil || p.Severity["BRK-UNPROVABLE"] != "error" || len(p.Ignore) != 1 || p.Ignore[0].Rule != "MCP-CONF-*" {
		t.Errorf("ParsePolicy = %+v, %v", p, err)
	}
	if p, err := ParsePolicy(nil, "empty.yml"); err != nil || len(p.Severity)+len(p.Ignore) != 0 {
		t.Errorf("empty file = %+v, %v", p, err)
	}
}
