package state

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/probe"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// mkTool is a served tool with properties a and b and the given required list.
func mkTool(name string, required ...string) Tool {
	if required == nil {
		required = []string{}
	}
	req, _ := json.Marshal(required)
	raw := fmt.Sprintf(`{"name":%q,"description":"does %s","inputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":%s}}`, name, name, req)
	return Tool{Name: name, Raw: json.RawMessage(raw)}
}

// mkFinding is a finding with its fingerprint computed as the probe does.
func mkFinding(target, rule, tool string) catalogue.Finding {
	f := catalogue.New(rule, tool, rule+" on "+tool)
	f.Fingerprint = catalogue.Fingerprint(target, f)
	return f
}

// loaderCount returns a snapshot loader over tools that counts its calls.
func loaderCount(tools []Tool, calls *int) func() ([]Tool, error) {
	return func() ([]Tool, error) { *calls++; return tools, nil }
}

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustLoad(t *testing.T, s *Store, target string) *State {
	t.Helper()
	st, err := s.Load(target)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustSave(t *testing.T, s *Store, st *State) {
	t.Helper()
	if err := s.Save(st); err != nil {
		t.Fatal(err)
	}
}

func changes(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Tool+":"+e.Change)
	}
	return out
}

// saved marks st as written, as a successful Save does.
func saved(st *State) { st.dirty, st.snapPending, st.snap = false, false, nil }

// testCaches are the tests' caches, as a daemon's would be: one for all.
var testCaches = probe.NewCaches(0)
