package poison

import (
	"fmt"

	"github.com/driftd/driftd/internal/catalogue"
)

// The sudden-growth thresholds: a served description at least growthRatio
// times as long as the declared one and at least growthBytes longer.
const (
	growthRatio = 4
	growthBytes = 512
)

// Growth returns MCP-SEC-DESCRIPTION-GROWTH for a definition (a tool, or
// an item of kind) whose served description grew suddenly against the
// declared one: the room a rug pull needs for its instructions. Lengths
// only, never the text.
func Growth(kind, subject, declared, served string) []catalogue.Finding {
	d, s := len(declared), len(served)
	if s < growthRatio*d || s-d < growthBytes {
		return nil
	}
	return []catalogue.Finding{finding(catalogue.SecDescriptionGrowth, kind, subject, "/description", fmt.Sprintf(
		"the description grew from %d bytes declared to %d bytes served (at least %d× and %d bytes more)", d, s, growthRatio, growthBytes))}
}
