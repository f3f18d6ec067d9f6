package catalogue

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestCatalogueTable(t *testing.T) {
	id := regexp.MustCompile(`^MCP-(DRIFT|CONF|AUTH|SEC)-[A-Z0-9-]+$`)
	seen := map[string]bool{}
	perFamily := map[Family]int{}
	for _, r := range Rules {
		perFamily[r.Family]++
		if !id.MatchString(r.ID) {
			t.Errorf("%s: id does not match %s", r.ID, id)
		}
		if seen[r.ID] {
			t.Errorf("%s: listed twice", r.ID)
		}
		seen[r.ID] = true
		if FamilyOf(r.ID) != r.Family {
			t.Errorf("%s: family %s does not match its prefix", r.ID, r.Family)
		}
		if r.Severity.Rank() == 0 {
			t.Errorf("%s: default severity %q is not ERROR, WARN or INFO", r.ID, r.Severity)
		}
		if strings.TrimSpace(r.Doc) == "" || strings.Contains(r.Doc, "\n") {
			t.Errorf("%s: needs a one-line doc", r.ID)
		}
	}
	for _, f := range Families {
		if perFamily[f] == 0 {
			t.Errorf("family %s has no rule", f)
		}
	}
	if len(perFamily) != len(Families) {
		t.Errorf("rules fall in %d families, Families lists %d", len(perFamily), len(Families))
	}
}

func TestRulesMarkdownIsCurrent(t *testing.T) {
	const path = "../../docs/rules.md"
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/catalogue -update)", err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date with the catalogue; run go test ./internal/catalogue -update", path)
	}
}

func TestFingerprintStable(t *testing.T) {
	f := Finding{Rule: DriftToolMissing, Tool: "search_orders"}
	a, b := Fingerprint("orders", f), Fingerprint("orders", f)
	if a != b || len(a) != 16 {
		t.Fatalf("fingerprints %q, %q: want equal 16-hex values", a, b)
	}
	if Fingerprint("other", f) == a {
		t.Fatal("fingerprint ignores the target")
	}
	// Field boundaries matter: ("ab","c") and ("a","bc") must differ.
	if Fingerprint("t", Finding{Rule: "ab", Tool: "c"}) == Fingerprint("t", Finding{Rule: "a", Tool: "bc"}) {
		t.Fatal("fingerprint parts are not separated")
	}
}

func TestSortOrder(t *testing.T) {
	fs := []Finding{
		{Rule: "B", Severity: Info}, {Rule: "B", Severity: Error, Tool: "z"},
		{Rule: "A", Severity: Warn}, {Rule: "B", Severity: Error, Tool: "a"},
	}
	Sort(fs)
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Severity)+"/"+f.Rule+"/"+f.Tool)
	}
	want := "ERROR/B/a ERROR/B/z WARN/A/ INFO/B/"
	if strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
}
