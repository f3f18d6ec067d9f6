package poison

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// The posture floors (docs/security.md, "The posture corpus"): the MCP-SEC
// rules must keep precision at or above minPrecision on the labelled
// corpus, and recall at or above recallFloor, which is what the detectors
// reached when the floor was last raised, rounded down. Whoever improves a
// detector raises the floor in the same change; nobody lowers it.
const (
	minPrecision = 0.98
	recallFloor  = 0.98
)

// The held-out sets (heldoutSets): testdata/posture/heldout.jsonl to heldout10.jsonl,
// each written blind — by an author who read neither the detectors nor
// the other sets' texts — and measured once before anyone read it
// (docs/security.md, "The posture corpus", keeps each first figure: those
// are the honest ones). Each set's figures are reported apart, never
// mixed into the training ones, and each has its own recall floor: what
// the detectors reach on it now, rounded down, raised and never lowered.
// Every set has since been read to improve the detectors, so today each
// floor is a training score too. A set whose precision is below
// minPrecision when it arrives is reported without failing (its
// precisionReported) until a detector change clears its false alarms; the
// change that clears them turns the gate back on. A new set is one more
// row.
var heldoutSets = []heldoutSet{
	{file: "heldout.jsonl", recallFloor: 0.98, least: postureMinima{50, 8, 100, 10}},
	{file: "heldout2.jsonl", recallFloor: 1.00, least: postureMinima{60, 8, 100, 10}},
	{file: "heldout3.jsonl", recallFloor: 0.98, least: postureMinima{60, 8, 100, 10}},
	{file: "heldout4.jsonl", recallFloor: 1.00, least: postureMinima{60, 20, 100, 10}},
	{file: "heldout5.jsonl", recallFloor: 1.00, least: postureMinima{60, 20, 100, 10}},
	{file: "heldout6.jsonl", recallFloor: 1.00, least: postureMinima{60, 20, 100, 12}},
	{file: "heldout7.jsonl", recallFloor: 1.00, least: postureMinima{60, 20, 120, 12}},
	{file: "heldout8.jsonl", recallFloor: 0.97, least: postureMinima{60, 20, 120, 12}},
	{file: "heldout9.jsonl", recallFloor: 0.94, least: postureMinima{60, 20, 120, 12}},
	{file: "heldout10.jsonl", recallFloor: 0.76, least: postureMinima{60, 20, 120, 12}, precisionReported: true},
}

// A heldoutSet is one held-out file, its recall floor, the least it must
// hold, and whether a precision below minPrecision is only reported.
type heldoutSet struct {
	file              string
	recallFloor       float64
	least             postureMinima
	precisionReported bool
}

// postureHits, with make posture-eval POSTURE_FLAGS=-posture.hits, also
// lists each hit with the rules and pointers that fired.
var postureHits = flag.Bool("posture.hits", false, "TestPosture: list each hit's rules and pointers")

// A postureItem is one line of testdata/posture/*.jsonl: a served tool
// definition with its label and provenance (testdata/posture/README.md).
type postureItem struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Kind        string `json:"kind"`
	Server      string `json:"server"`
	Source      string `json:"source"`
	Licence     string `json:"licence"`
	Derived     bool   `json:"derived"`
	DerivedFrom string `json:"derived_from"`
	Language    string `json:"language"`
	// ServedWith are the names of the honest tools served beside this
	// one (the targets of a sleeper, the originals of a look-alike);
	// ShadowTools the target's shadow_tools; PreviousDescription what
	// the tool served before, for a rug pull.
	ServedWith          []string `json:"served_with"`
	ShadowTools         []string `json:"shadow_tools"`
	PreviousDescription *string  `json:"previous_description"`
	// Pointer, when set, is where the payload is (RFC 6901): a hit must
	// be a finding at it or below it, so a finding that only lands
	// elsewhere is no hit.
	Pointer string          `json:"pointer"`
	Tool    json.RawMessage `json:"tool"`

	tool mcp.Tool
}

const (
	labelPoisoned = "poisoned"
	labelBenign   = "benign"
	// driftdWritten is the source of testdata/benign.txt's tools, which
	// the posture corpus includes as the benign server "driftd-written".
	driftdWritten = "driftd-written"
)

// postureSets reads testdata/posture: the training corpus (every *.jsonl
// but the held-out sets, and testdata/benign.txt as the server
// driftd-written) and the held-out sets, in heldoutSets' order. Each line
// is checked: a known label, a kind, a source and a licence, an id unique
// across all sets, a derived item's original present in the same set, and
// a tool that parses.
func postureSets(tb testing.TB) (training []*postureItem, held [][]*postureItem) {
	files, err := filepath.Glob("testdata/posture/*.jsonl")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no posture corpus in testdata/posture (%v)", err)
	}
	index := map[string]int{}
	for i, h := range heldoutSets {
		index[h.file] = i
	}
	held = make([][]*postureItem, len(heldoutSets))
	seen := map[string]bool{}
	for _, name := range files {
		its := readPostureFile(tb, name, seen)
		if i, ok := index[filepath.Base(name)]; ok {
			held[i] = its
		} else {
			training = append(training, its...)
		}
	}
	checkDerived(tb, training)
	for i, its := range held {
		if its == nil {
			tb.Fatalf("no held-out set testdata/posture/%s", heldoutSets[i].file)
		}
		checkDerived(tb, its)
	}
	tools, _ := corpus(tb)
	for _, t := range tools {
		training = append(training, &postureItem{ID: driftdWritten + "/" + t.Name, Label: labelBenign, Kind: labelBenign,
			Server: driftdWritten, Source: "internal/poison/testdata/benign.txt", Licence: "driftd's own", tool: t})
	}
	return training, held
}

// readPostureFile reads and checks one *.jsonl file; seen holds the ids
// read so far, across files.
func readPostureFile(tb testing.TB, name string, seen map[string]bool) []*postureItem {
	data, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	var items []*postureItem
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		it := &postureItem{}
		if err := dec.Decode(it); err != nil {
			tb.Fatalf("%s:%d: %v", name, n, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			tb.Fatalf("%s:%d: trailing data after the item", name, n)
		}
		if it.tool, err = mcp.ParseTool(it.Tool); err != nil {
			tb.Fatalf("%s:%d: %s: %v", name, n, it.ID, err)
		}
		switch {
		case it.ID == "" || seen[it.ID]:
			tb.Fatalf("%s:%d: missing or repeated id %q", name, n, it.ID)
		case it.Label != labelPoisoned && it.Label != labelBenign:
			tb.Fatalf("%s:%d: %s: label %q is neither poisoned nor benign", name, n, it.ID, it.Label)
		case it.Kind == "" || it.Source == "" || it.Licence == "":
			tb.Fatalf("%s:%d: %s: kind, source and licence are required", name, n, it.ID)
		case it.Label == labelBenign && it.Server == "":
			tb.Fatalf("%s:%d: %s: a benign item names its server", name, n, it.ID)
		case it.Derived != (it.DerivedFrom != ""):
			tb.Fatalf("%s:%d: %s: derived and derived_from disagree", name, n, it.ID)
		}
		seen[it.ID] = true
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return items
}

// checkDerived fails when a derived item's original is not in its set: a
// held-out variant of a training item would leak the training set into
// the held-out figures.
func checkDerived(tb testing.TB, items []*postureItem) {
	byID := map[string]bool{}
	for _, it := range items {
		byID[it.ID] = true
	}
	for _, it := range items {
		if it.Derived && !byID[it.DerivedFrom] {
			tb.Fatalf("%s: derived from %q, which is not in its set", it.ID, it.DerivedFrom)
		}
	}
}

// flagged reports the MCP-SEC rules of WARN or ERROR severity that fire
// on subject in fs, as "RULE pointer" (never the text), and whether one
// fired at pointer or below it (any, for an empty pointer). INFO
// inventory rules (URL, e-mail) are no verdict and do not count.
func flagged(fs []catalogue.Finding, subject, pointer string) (out []string, at bool) {
	for _, f := range fs {
		if f.Tool == subject && f.Severity != catalogue.Info && strings.HasPrefix(f.Rule, "MCP-SEC-") {
			out = append(out, f.Rule+" "+f.Pointer)
			at = at || pointer == "" || f.Pointer == pointer || strings.HasPrefix(f.Pointer, pointer+"/")
		}
	}
	return out, at
}

// stub is an honest tool of the given name served beside a poisoned one.
func stub(tb testing.TB, name string) mcp.Tool {
	raw, _ := json.Marshal(map[string]any{"name": name, "description": "A tool of the same server.",
		"inputSchema": map[string]any{"type": "object"}})
	t, err := mcp.ParseTool(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// evalPoisoned runs the rules over one poisoned item as its own served
// surface, the way a probe sees it: the item served first, then the honest
// tools it is served with, the target's shadow_tools, and, for a rug pull,
// the description it served before as the declared one. It returns what
// fired on the item, and whether it fired where the payload is.
func evalPoisoned(tb testing.TB, it *postureItem) ([]string, bool) {
	served := []mcp.Tool{it.tool}
	for _, name := range it.ServedWith {
		served = append(served, stub(tb, name))
	}
	s := NewScanner(served, it.ShadowTools)
	fs := s.Tool(it.tool)
	fs = append(fs, Names(served, nil, it.ShadowTools)...)
	if it.PreviousDescription != nil {
		fs = append(fs, Growth("", it.tool.Name, *it.PreviousDescription, it.tool.Description)...)
	}
	return flagged(fs, it.tool.Name, it.Pointer)
}

// evalBenign runs the rules over each benign server's tools as one served
// surface, as a probe of that server would, and returns what fired on
// each item, by id.
func evalBenign(items []*postureItem) map[string][]string {
	byServer := map[string][]*postureItem{}
	var servers []string
	for _, it := range items {
		if it.Label != labelBenign {
			continue
		}
		if byServer[it.Server] == nil {
			servers = append(servers, it.Server)
		}
		byServer[it.Server] = append(byServer[it.Server], it)
	}
	out := map[string][]string{}
	for _, srv := range servers {
		its := byServer[srv]
		served := make([]mcp.Tool, len(its))
		for i, it := range its {
			served[i] = it.tool
		}
		s := NewScanner(served, nil)
		names := Names(served, nil, nil)
		for _, it := range its {
			fs := append(s.Tool(it.tool), names...)
			if f, _ := flagged(fs, it.tool.Name, ""); len(f) > 0 {
				out[it.ID] = f
			}
		}
	}
	return out
}

// ratio is a/b, or 1 for an empty set.
func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// TestPosture is make posture-eval: it runs the MCP-SEC rules over the
// labelled corpus, prints precision, recall (overall, by kind, and on the
// tag-stripped variants against their originals) and the misses and false
// alarms by id, never by text, and fails below the floors. It then does the
// same, apart, on each held-out set. Every set's misses have been read to
// improve the detectors, so all these figures are training scores; each
// set's first, blind figure is in docs/security.md.
func TestPosture(t *testing.T) {
	training, held := postureSets(t)
	var out strings.Builder
	type set struct {
		name string
		heldoutSet
		items []*postureItem
	}
	sets := []set{{"posture corpus", heldoutSet{recallFloor: recallFloor, least: postureMinima{80, 8, 300, 15}}, training}}
	for i, h := range heldoutSets {
		name := "held-out set (" + h.file + ")"
		if i > 0 {
			name = fmt.Sprintf("held-out set %d (%s)", i+1, h.file)
		}
		sets = append(sets, set{name, h, held[i]})
	}
	for _, set := range sets {
		p, r := postureReport(t, &out, set.name, set.items, set.least)
		switch {
		case p < minPrecision && set.precisionReported:
			t.Logf("%s: precision %.3f is below %.2f (reported, not enforced: its precisionReported)", set.name, p, minPrecision)
		case p < minPrecision:
			t.Errorf("%s: precision %.3f is below %.2f", set.name, p, minPrecision)
		}
		if r < set.recallFloor {
			t.Errorf("%s: recall %.3f is below the committed floor %.2f", set.name, r, set.recallFloor)
		}
	}
	fmt.Print(out.String())
}

// postureMinima is the least a set must hold: poisoned items and their
// sources, benign tools and their servers.
type postureMinima struct{ poisoned, sources, benign, servers int }

// postureReport runs the rules over one set, writes its figures to w under
// the heading name, and returns its precision and recall. The benign tools
// of the set alone count as its false alarms.
func postureReport(t *testing.T, w *strings.Builder, name string, items []*postureItem, least postureMinima) (precision, recall float64) {
	var poisoned, benign []*postureItem
	sources := map[string]bool{}
	servers := map[string]bool{}
	for _, it := range items {
		if it.Label == labelPoisoned {
			poisoned = append(poisoned, it)
			sources[it.Source] = true
		} else {
			benign = append(benign, it)
			servers[it.Server] = true
		}
	}
	if len(poisoned) < least.poisoned || len(sources) < least.sources || len(benign) < least.benign || len(servers) < least.servers {
		t.Fatalf("the %s has %d poisoned items from %d sources and %d benign tools from %d servers; "+
			"it should have at least %d from %d and %d from %d", name, len(poisoned), len(sources), len(benign), len(servers),
			least.poisoned, least.sources, least.benign, least.servers)
	}

	hit := map[string]bool{}
	type tally struct{ n, hit int }
	byKind := map[string]*tally{}
	var kinds []string
	misses := map[string][]string{}
	var elsewhere []string
	var hits strings.Builder
	for _, it := range poisoned {
		fired, at := evalPoisoned(t, it)
		hit[it.ID] = at && len(fired) > 0
		if len(fired) > 0 && !at {
			elsewhere = append(elsewhere, fmt.Sprintf("%s (payload at %s): %s", it.ID, it.Pointer, strings.Join(fired, ", ")))
		}
		k := byKind[it.Kind]
		if k == nil {
			k = &tally{}
			byKind[it.Kind] = k
			kinds = append(kinds, it.Kind)
		}
		k.n++
		if hit[it.ID] {
			k.hit++
			if *postureHits {
				fmt.Fprintf(&hits, "  %s: %s\n", it.ID, strings.Join(fired, ", "))
			}
		} else {
			misses[it.Kind] = append(misses[it.Kind], it.ID)
		}
	}
	alarms := evalBenign(items)
	tp, fp := 0, len(alarms)
	for _, ok := range hit {
		if ok {
			tp++
		}
	}
	precision, recall = ratio(tp, tp+fp), ratio(tp, len(poisoned))

	// Published items against driftd's variants of them, and tag-stripped
	// variants against their originals.
	var published, derived tally
	for _, it := range poisoned {
		k := &published
		if it.Derived {
			k = &derived
		}
		k.n++
		if hit[it.ID] {
			k.hit++
		}
	}
	var strip, orig tally
	for _, it := range poisoned {
		if it.Kind != "tag-stripped" {
			continue
		}
		strip.n++
		orig.n++
		if hit[it.ID] {
			strip.hit++
		}
		if hit[it.DerivedFrom] {
			orig.hit++
		}
	}

	fmt.Fprintf(w, "%s: %d poisoned items (%d derived) from %d sources; %d benign tools from %d servers\n",
		name, len(poisoned), countDerived(poisoned), len(sources), len(benign), len(servers))
	fmt.Fprintf(w, "precision %.3f  recall %.3f  (%d hits, %d misses, %d false alarms)\n",
		precision, recall, tp, len(poisoned)-tp, fp)
	fmt.Fprintf(w, "recall %.3f on the %d published items, %.3f on the %d derived variants\n",
		ratio(published.hit, published.n), published.n, ratio(derived.hit, derived.n), derived.n)
	fmt.Fprintf(w, "tag-stripped: recall %.3f on %d variants, %.3f on their originals\n",
		ratio(strip.hit, strip.n), strip.n, ratio(orig.hit, orig.n))
	slices.Sort(kinds)
	fmt.Fprintf(w, "recall by kind:\n")
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-32s %5.2f  (%d/%d)\n", k, ratio(byKind[k].hit, byKind[k].n), byKind[k].hit, byKind[k].n)
	}
	fmt.Fprintf(w, "misses by kind (ids):\n")
	for _, k := range kinds {
		if len(misses[k]) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(misses[k], " "))
		}
	}
	if len(elsewhere) > 0 {
		fmt.Fprintf(w, "misses flagged elsewhere than the payload (counted as misses):\n  %s\n", strings.Join(elsewhere, "\n  "))
	}
	if *postureHits {
		fmt.Fprintf(w, "hits (ids):\n%s", hits.String())
	}
	fmt.Fprintf(w, "false alarms (ids):\n")
	ids := make([]string, 0, len(alarms))
	for id := range alarms {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(w, "  %s: %s\n", id, strings.Join(alarms[id], ", "))
	}
	fmt.Fprintln(w)
	return precision, recall
}

func countDerived(items []*postureItem) (n int) {
	for _, it := range items {
		if it.Derived {
			n++
		}
	}
	return n
}
