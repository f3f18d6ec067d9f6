package probe

import (
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
)

// Failed returns the report of a run that could not start, such as one
// whose manifest does not load: a target-level failure with reason and
// message, nothing sent.
func Failed(t config.Target, reason mcp.Reason, message string, opts Options) *Report {
	r := newRun(t, nil, opts, time.Now())
	r.rep.Classification = Classify(t)
	r.fail(reason, message)
	r.finish(0)
	return r.rep
}
