package probe

import (
	"fmt"
	"slices"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// ServedManifest is what a successful run served, of the kinds asked
// for, as a manifest: the tools (unless left out) and every other list the
// run read and the server answered (a list answered with -32601 is left
// out). It is the one place a served surface becomes a manifest: `driftd
// capture` writes it, and a baseline-mode target records it. A list whose
// paging was capped would be incomplete and is an error; a name served
// twice keeps its first definition and is reported in warnings, as is a
// kind asked for by name (explicit) that the run did not read.
func ServedManifest(rep *Report, kinds []mcp.Kind, explicit bool) (m *manifest.Manifest, counts, warnings []string, err error) {
	m = &manifest.Manifest{NoTools: !slices.Contains(kinds, mcp.KindTool), Items: map[mcp.Kind][]mcp.Item{}}
	if !m.NoTools {
		if rep.Tools.PageCapReached {
			return nil, nil, nil, fmt.Errorf("the page cap was reached on tools/list: the manifest would be incomplete")
		}
		tools, dropped := Unique(rep.Served())
		for _, name := range dropped {
			warnings = append(warnings, fmt.Sprintf("tool %q served more than once; kept the first", sanitize.Name(name)))
		}
		m.Tools = tools
		counts = append(counts, fmt.Sprintf("%d tools", len(tools)))
	}
	for _, k := range mcp.ItemKinds {
		if !slices.Contains(kinds, k) {
			continue
		}
		items, listed := rep.ServedItems(k)
		c := rep.ListCounts(k)
		switch {
		case !listed || c == nil:
			if explicit {
				warnings = append(warnings, fmt.Sprintf("the server does not advertise %s; not written", k.Key()))
			}
			continue
		case c.MethodNotFound:
			warnings = append(warnings, fmt.Sprintf("the server advertises %s but %s is not found; not written", k.Key(), k.Method()))
			continue
		case c.PageCapReached:
			return nil, nil, nil, fmt.Errorf("the page cap was reached on %s: the manifest would be incomplete", k.Method())
		}
		seen := map[string]bool{}
		kept := make([]mcp.Item, 0, len(items))
		for _, it := range items {
			if seen[it.Key] {
				warnings = append(warnings, fmt.Sprintf("%s %q served more than once; kept the first", k.Noun(), sanitize.Name(it.Key)))
				continue
			}
			seen[it.Key] = true
			kept = append(kept, it)
		}
		m.Items[k] = kept
		counts = append(counts, fmt.Sprintf("%d %ss", len(kept), k.Noun()))
	}
	if m.NoTools && len(m.Items) == 0 {
		return nil, nil, nil, fmt.Errorf("nothing to capture: the server serves none of the lists asked for")
	}
	return m, counts, warnings, nil
}
