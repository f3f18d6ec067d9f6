package catalogue

import (
	"flag"
	"net"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestCatalogueTable(t *testing.T) {
	id := regexp.MustCompile(`^MCP-(DRIFT|CONF|AUTH)-[A-Z0-9-]+$`)
	seen := map[string]bool{}
	for _, r := range Rules {
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

func TestCheckSchema(t *testing.T) {
	for _, tc := range []struct {
		schema string
		valid  bool
	}{
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, true},
		{`{"properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"type":"string"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{}},"properties":{"x":{"$ref":"#/definitions/a"}}}`, true},
		{`{"type":5}`, false},
		{`{"minimum":"x"}`, false},
		{`{"required":"a"}`, false},
		{`{"pattern":"("}`, false},
		{`{"$ref":"#/nope"}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"strin"}`, false},
		{`{"$schema":"https://example.invalid/meta"}`, false},
		{`{"$ref":"https://example.invalid/schema.json"}`, false},
		{strings.Repeat(`{"items":`, 65) + `{}` + strings.Repeat(`}`, 65), false},
	} {
		err := CheckSchema([]byte(tc.schema))
		if (err == nil) != tc.valid {
			t.Errorf("CheckSchema(%.60s) = %v, want valid=%v", tc.schema, err, tc.valid)
		}
	}
}

// TestCompilerNeverFetches serves a schema whose $ref and $schema point at
// a loopback listener and asserts that nothing arrives there (DESIGN §16).
func TestCompilerNeverFetches(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	base := "http://" + ln.Addr().String()
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"` + base + `/a.json"}}}`,
		`{"$schema":"` + base + `/meta","type":"object"}`,
		`{"$id":"` + base + `/root","$ref":"other.json"}`,
	} {
		_ = CheckSchema([]byte(s))
	}
	time.Sleep(50 * time.Millisecond) // let any stray connection land
	ln.Close()
	if n := hits.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback listener: the compiler fetched a remote schema", n)
	}
}
