package benchgen

import (
	"fmt"
	"io"
)

// Budget prints one line of a benchmark's table, the one format every
// benchmark of DESIGN §14 uses:
//
//	budget | goal | measured | met?
//
// A benchmark prints its lines and never fails on timing; only a harness
// failure (a server that did not start, a run that failed) ends it non-zero.
func Budget(w io.Writer, budget, goal, measured string, met bool) {
	verdict := "met"
	if !met {
		verdict = "NOT MET"
	}
	fmt.Fprintf(w, "%s | %s | %s | %s\n", budget, goal, measured, verdict)
}
