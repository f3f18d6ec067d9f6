package probe

import (
	"errors"
	"fmt"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/jsonscan"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/sanitize"
)

// The bounds on a baseline a baseline-mode target stores (its canonical
// manifest, compact in the state file): far above a real server's surface,
// and well below the nesting encoding/json refuses to read back (10,000
// levels, the state file's own included), so that a stored baseline
// always loads again after a restart. Stored compact, a deep surface costs
// its own size, not its size times its depth.
const (
	MaxBaselineBytes = 16 << 20
	MaxBaselineDepth = 4096
)

// BaselineBounds reports whether canon, a canonical manifest, may be
// stored as a baseline: at most MaxBaselineBytes long and nested at most
// MaxBaselineDepth levels (the document's own two included).
func BaselineBounds(canon []byte) error {
	if len(canon) > MaxBaselineBytes {
		return fmt.Errorf("the served surface is %d bytes as a canonical manifest, more than the %d a baseline may hold", len(canon), MaxBaselineBytes)
	}
	if _, err := jsonscan.Decode(canon, MaxBaselineDepth); errors.Is(err, jsonscan.ErrTooDeep) {
		return fmt.Errorf("the served surface nests more than the %d levels a baseline may hold", MaxBaselineDepth)
	} else if err != nil {
		return fmt.Errorf("the served surface does not render as a manifest: %w", err)
	}
	return nil
}

// checkBaselineBounds is the finding of a run that is to record a
// baseline from a surface that exceeds a stored baseline's bounds: no
// baseline is recorded from it.
func checkBaselineBounds(rep *Report) []catalogue.Finding {
	m, _, _, err := ServedManifest(rep, mcp.Kinds, false)
	if err != nil {
		return nil // incomplete: nothing is recorded anyway
	}
	canon, err := m.Canonical()
	if err == nil {
		err = BaselineBounds(canon)
	}
	if err == nil {
		return nil
	}
	return []catalogue.Finding{catalogue.New(catalogue.DriftBaselineBounds, "", err.Error()+"; no baseline is recorded from it")}
}

// checkBaselineReview is the finding of every run of a baseline-mode
// target held in "needs review" (Prepared.Review says why): it stays
// active, and pages like any ERROR finding, until an accept ends it.
func checkBaselineReview(why string) []catalogue.Finding {
	return []catalogue.Finding{catalogue.New(catalogue.DriftBaselineReview, "",
		"the baseline needs review ("+sanitize.Text(why)+"): nothing is compared and no baseline is recorded until one is accepted")}
}
