package probe_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// TestRecall: a run served its last run's listing concludes the same
// without decoding it — the same report but for the clock, findings
// included — in either era; a listing that changed since is read and
// checked again, and one the second connection was served otherwise is
// not recalled.
func TestRecall(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b", "c"), Legacy: legacy, Sessions: legacy})
		defer srv.Close()
		target := config.NewTarget("mock", srv.URL)
		target.Timeout = 5 * time.Second
		declared := declare(t, "a", "b", "c")
		run := func(recall probe.Recall) *probe.Report {
			t.Helper()
			p := probe.Prepare(target, declared)
			p.Recall = recall
			rep := probe.Run(context.Background(), p, probe.Options{Version: "test"})
			if err := srv.CheckNoViolations(); err != nil {
				t.Errorf("legacy=%v: driftd sent a request the strict mock rejects: %v", legacy, err)
			}
			return rep
		}

		first := run(probe.Recall{})
		if first.ServedAsBefore() || first.Recall().IsZero() || first.Recall().Tools != 3 {
			t.Fatalf("legacy=%v: first run: served as before %v, recall %+v", legacy, first.ServedAsBefore(), first.Recall())
		}
		second := run(first.Recall())
		if !second.ServedAsBefore() || second.Served() != nil || !sameRecall(second.Recall(), first.Recall()) {
			t.Fatalf("legacy=%v: a run served the same: served as before %v, %d tools kept, recall %+v (was %+v)",
				legacy, second.ServedAsBefore(), len(second.Served()), second.Recall(), first.Recall())
		}
		if a, b := clockless(t, first), clockless(t, second); a != b {
			t.Errorf("legacy=%v: the recalled run's report differs from the one it recalls:\n%s\n%s", legacy, a, b)
		}

		srv.SetOptions(func(o *mcptest.Options) { o.Tools = tools("a", "c") })
		third := run(second.Recall())
		if third.ServedAsBefore() || !hasRule(third, catalogue.DriftToolMissing) || len(third.Recall().Findings) != 1 {
			t.Errorf("legacy=%v: a run served a changed listing: served as before %v, findings %v, recall %+v",
				legacy, third.ServedAsBefore(), rules(third), third.Recall())
		}
		fourth := run(third.Recall())
		if !fourth.ServedAsBefore() || !sameRecall(fourth.Recall(), third.Recall()) {
			t.Errorf("legacy=%v: the drifted listing again: served as before %v, recall %+v", legacy, fourth.ServedAsBefore(), fourth.Recall())
		}
		if a, b := clockless(t, third), clockless(t, fourth); a != b {
			t.Errorf("legacy=%v: the recalled drift differs from the one it recalls:\n%s\n%s", legacy, a, b)
		}
		// A server whose first connection is served those bytes, its
		// second others: the first listing is read to compare them (it
		// is still the last run's, and served as before).
		other := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b", "c"), OtherConnTools: tools("a", "b"), Legacy: legacy, Sessions: legacy})
		defer other.Close()
		srv, target.URL = other, other.URL
		if fifth := run(first.Recall()); !fifth.ServedAsBefore() || fifth.Tools.SecondConnection != "set_varies" || !fifth.Recall().IsZero() {
			t.Errorf("legacy=%v: the second connection served otherwise: served as before %v, second %q, recall %+v",
				legacy, fifth.ServedAsBefore(), fifth.Tools.SecondConnection, fifth.Recall())
		}
	}
}

// TestRecallKeepsWhatWasHidden: a Recall keeps what the listing's checks
// found before the run's de-duplication — a page without resultType,
// hidden this run by the discovery's finding of the same identity, must
// be found again by a run whose discovery is fixed — and is only for a
// session of its era and version, and only from a run that succeeded.
func TestRecallKeepsWhatWasHidden(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a"), OmitResultType: true})
	defer srv.Close()
	target := config.NewTarget("mock", srv.URL)
	target.Timeout = 5 * time.Second
	p := probe.Prepare(target, declare(t, "a"))
	rep := probe.Run(context.Background(), p, probe.Options{Version: "test"})
	var reported, recalled []string
	for _, f := range rep.Findings {
		if f.Rule == catalogue.ConfResultType {
			reported = append(reported, f.Message)
		}
	}
	for _, f := range rep.Recall().Findings {
		if f.Rule == catalogue.ConfResultType {
			recalled = append(recalled, f.Message)
		}
	}
	if len(reported) != 1 || len(recalled) != 1 || recalled[0] == reported[0] {
		t.Errorf("reported %q (the discovery's), recalled %q (want the page's)", reported, recalled)
	}
	if r := rep.Recall(); r.Era != "modern" || r.Version == "" {
		t.Errorf("recall of era %q, version %q", r.Era, r.Version)
	}

	// The same bytes in another era's session are read again.
	other := rep.Recall()
	other.Era = "legacy"
	p.Recall = other
	if again := probe.Run(context.Background(), p, probe.Options{Version: "test"}); again.ServedAsBefore() {
		t.Error("a Recall of another era was taken")
	}

	// A run that fails recalls nothing.
	srv.Close()
	p.Recall = rep.Recall()
	if failed := probe.Run(context.Background(), p, probe.Options{Version: "test"}); failed.Success || !failed.Recall().IsZero() {
		t.Errorf("failed run: success %v, recall %+v", failed.Success, failed.Recall())
	}
}

// TestRecallIsBounded: a listing whose findings carry more than a
// Recall keeps (the server chose their texts) is read every run.
func TestRecallIsBounded(t *testing.T) {
	long := func(c byte) string { return strings.Repeat(string(c), 10_000) }
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", long('x'), long('y'), long('z'))})
	defer srv.Close()
	target := config.NewTarget("mock", srv.URL)
	target.Timeout = 5 * time.Second
	rep := probe.Run(context.Background(), probe.Prepare(target, declare(t, "a")), probe.Options{Version: "test"})
	if !rep.Success || !hasRule(rep, catalogue.DriftToolUndeclared) || !rep.Recall().IsZero() {
		t.Errorf("success %v, findings %v, recall of %d findings", rep.Success, rules(rep), len(rep.Recall().Findings))
	}
}

// TestRecallReadsWhenNeeded: a run that needs the tools after all — an
// anonymous listing to compare them with — reads the recalled listing,
// and still concludes the same.
func TestRecallReadsWhenNeeded(t *testing.T) {
	srv := mcptest.NewServer(mcptest.Options{Tools: tools("a", "b")})
	defer srv.Close()
	target := config.NewTarget("mock", srv.URL)
	target.Timeout = 5 * time.Second
	withBearer(t, token)(&target)
	p := probe.Prepare(target, declare(t, "a", "b"))
	first := probe.Run(context.Background(), p, probe.Options{Version: "test"})
	if first.Recall().IsZero() {
		t.Fatalf("no recall from %v", rules(first))
	}
	p.Recall = first.Recall()
	second := probe.Run(context.Background(), p, probe.Options{Version: "test"})
	if second.ServedAsBefore() || len(second.Served()) != 2 || !sameRecall(second.Recall(), first.Recall()) {
		t.Errorf("served as before %v, %d tools, recall %+v", second.ServedAsBefore(), len(second.Served()), second.Recall())
	}
	if a, b := clockless(t, first), clockless(t, second); a != b {
		t.Errorf("the reports differ:\n%s\n%s", a, b)
	}
}

func sameRecall(a, b probe.Recall) bool {
	return a.Page == b.Page && a.Tools == b.Tools && reflect.DeepEqual(a.Findings, b.Findings)
}

// clockless is rep as JSON without its start and duration.
func clockless(t *testing.T, rep *probe.Report) string {
	t.Helper()
	c := rep.Copy()
	c.StartedAt, c.DurationSeconds = time.Time{}, 0
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rules(rep *probe.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Rule)
	}
	return out
}

func hasRule(rep *probe.Report, rule string) bool { return slices.Contains(rules(rep), rule) }
