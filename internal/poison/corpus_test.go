package poison

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// fpBound is the documented bound (docs/security.md) on findings per rule
// over the benign corpus; the INFO inventory rules (URL, e-mail) have
// none, since a URL in a description is no defect.
var fpBound = map[string]int{
	catalogue.SecTagCharacters:       0,
	catalogue.SecInvisibleCharacters: 0,
	catalogue.SecTerminalEscape:      0,
	catalogue.SecConfusableName:      0,
	catalogue.SecModelInstruction:    0,
	catalogue.SecSecretLure:          0,
	catalogue.SecEncodedBlob:         0,
	catalogue.SecShadowing:           0,
	catalogue.SecDescriptionGrowth:   0,
	catalogue.SecAnnotationClaim:     0,
}

// corpus reads testdata/benign.txt as served tools, each with its
// parameters' descriptions in its inputSchema, and counts the texts.
func corpus(tb testing.TB) (tools []mcp.Tool, texts int) {
	f, err := os.Open("testdata/benign.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	type def struct {
		name, desc string
		params     map[string]any
	}
	var defs []*def
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "==") {
			continue
		}
		name, text, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			tb.Fatalf("benign.txt: %q is not name: text", line)
		}
		texts++
		if strings.HasPrefix(line, "  ") {
			defs[len(defs)-1].params[name] = map[string]any{"type": "string", "description": text}
			continue
		}
		defs = append(defs, &def{name: name, desc: text, params: map[string]any{}})
	}
	for _, d := range defs {
		raw, _ := json.Marshal(map[string]any{"name": d.name, "description": d.desc,
			"inputSchema": map[string]any{"type": "object", "properties": d.params}})
		t, err := mcp.ParseTool(raw)
		if err != nil {
			tb.Fatal(err)
		}
		tools = append(tools, t)
	}
	return tools, texts
}

// TestBenignCorpus runs every detector over the benign corpus as one
// served surface (every server's tools together, so shadowing and
// confusable names see them all), prints the count per rule and fails
// past the documented bounds. Each finding it allows is listed by tool
// and pointer so that a change of the count is easy to review.
func TestBenignCorpus(t *testing.T) {
	tools, texts := corpus(t)
	if len(tools) < 150 || texts < 400 {
		t.Fatalf("the corpus has %d tools and %d texts; it should have a few hundred", len(tools), texts)
	}
	s := NewScanner(tools, nil)
	var fs []catalogue.Finding
	for _, tl := range tools {
		fs = append(fs, s.Tool(tl)...)
	}
	fs = append(fs, Names(tools, tools, nil)...)
	for _, tl := range tools {
		fs = append(fs, Growth("", tl.Name, tl.Description, tl.Description)...)
	}
	count := map[string]int{}
	for _, f := range fs {
		count[f.Rule]++
		t.Logf("%s %s %s: %s", f.Rule, f.Tool, f.Pointer, f.Message)
	}
	var lines []string
	for _, r := range catalogue.Rules {
		if r.Family != catalogue.FamilySec {
			continue
		}
		bound, bounded := fpBound[r.ID]
		lines = append(lines, fmt.Sprintf("%-30s %3d", r.ID, count[r.ID]))
		if bounded && count[r.ID] > bound {
			t.Errorf("%s: %d findings on the benign corpus, bound %d", r.ID, count[r.ID], bound)
		}
		if !bounded && r.Severity != catalogue.Info {
			t.Errorf("%s: no false-positive bound", r.ID)
		}
	}
	slices.Sort(lines)
	fmt.Printf("benign corpus: %d tools, %d texts\n%s\n", len(tools), texts, strings.Join(lines, "\n"))
}
