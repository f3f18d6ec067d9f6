package probe

import (
	"time"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/poison"
)

// Diff compares two manifests through the same rules as a probe: old plays
// the declared manifest, new the served set. The report has the shape of a
// probe's; protocol and auth fields are empty.
func Diff(target string, old, new *manifest.Manifest, opts Options) *Report {
	start := time.Now()
	r := startRun(target, new.Path, old, opts, start)
	r.rep.Success = true
	r.rep.Classification = Classification{Class: "unknown", Reason: "manifest comparison: " + old.Path + " → " + new.Path}
	r.rep.ProtocolRevision = Revision{Reason: "manifest comparison"}
	if old.Declares(mcp.KindTool) && new.Declares(mcp.KindTool) {
		r.rep.Tools.Served = len(new.Tools)
		for f := range compareSets(opts.Caches, old, new.Tools, false, "manifest") {
			r.emitFrom(nil, f) // no request: no span
		}
	}
	r.postureOf(old, new)
	// A list is compared when both manifests declare it: a list only one
	// declares says nothing about the other side.
	for _, k := range mcp.ItemKinds {
		if !old.Declares(k) || !new.Declares(k) {
			continue
		}
		r.rep.setCounts(k, &ToolCounts{Declared: len(old.Items[k]), Served: len(new.Items[k])})
		r.emitFrom(nil, compareItemSets(k, old.Items[k], new.Items[k], false, "manifest")...)
	}
	r.finish(time.Since(start))
	return r.rep
}

// postureOf runs the MCP-SEC text detectors over new, which plays the
// served surface, and the confusable-name check against old's tools.
func (r *run) postureOf(old, new *manifest.Manifest) {
	var declared []mcp.Tool
	if old.Declares(mcp.KindTool) {
		declared = old.Tools
	}
	r.scan = poison.NewScanner(new.Tools, nil)
	seen := map[string]bool{}
	for _, t := range new.Tools {
		if !seen[t.Name] {
			seen[t.Name] = true
			r.emitFrom(nil, r.scan.Tool(t)...)
		}
	}
	r.emitFrom(nil, poison.Names(new.Tools, declared, nil)...)
	for _, k := range mcp.ItemKinds {
		for _, it := range new.Items[k] {
			r.emitFrom(nil, r.scan.Item(it)...)
		}
	}
}
