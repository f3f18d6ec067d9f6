package probe

import (
	"time"

	"github.com/driftd/driftd/internal/manifest"
)

// Diff compares two manifests through the same rules as a probe: old plays
// the declared manifest, new the served set. The report has the shape of a
// probe's; protocol and auth fields are empty.
func Diff(target string, old, new *manifest.Manifest, opts Options) *Report {
	start := time.Now()
	r := &run{opts: opts, once: map[string]bool{}}
	r.t.Name = target
	r.rep = &Report{
		DriftdVersion:        opts.Version,
		Target:               target,
		BaseURL:              new.Path,
		StartedAt:            start.UTC(),
		Success:              true,
		Classification:       Classification{Class: "unknown", Reason: "manifest comparison: " + old.Path + " → " + new.Path},
		ProtocolRevision:     Revision{Reason: "manifest comparison"},
		Era:                  "unknown",
		AuthorizationHeaders: []string{},
		AuthPosture:          AuthPosture{AnonymousList: "not_checked"},
		Tools:                ToolCounts{Declared: len(old.Tools), Served: len(new.Tools), Pages: 0},
	}
	for _, f := range compareSets(old.Tools, new.Tools, false) {
		r.emit(f)
	}
	r.finish(time.Since(start))
	return r.rep
}
