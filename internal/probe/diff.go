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
	r := startRun(target, new.Path, old, opts, start)
	r.rep.Success = true
	r.rep.Classification = Classification{Class: "unknown", Reason: "manifest comparison: " + old.Path + " → " + new.Path}
	r.rep.ProtocolRevision = Revision{Reason: "manifest comparison"}
	r.rep.Tools.Served = len(new.Tools)
	for f := range compareSets(old.Tools, new.Tools, false) {
		r.emitFrom(nil, f) // no request: no span
	}
	r.finish(time.Since(start))
	return r.rep
}
