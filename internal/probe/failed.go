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
	r := &run{t: t, opts: opts, once: map[string]bool{}}
	r.rep = &Report{
		DriftdVersion:          opts.Version,
		Target:                 t.Name,
		BaseURL:                t.URL,
		StartedAt:              time.Now().UTC(),
		Era:                    "unknown",
		Classification:         Classify(t),
		ProtocolRevision:       Revision{Reason: "not established"},
		AuthorizationHeaders:   config.CredentialHeaders(&t.HTTPClient),
		AuthorizationPresented: credentialsPresented(&t.HTTPClient),
		AuthPosture:            AuthPosture{AnonymousList: "not_checked"},
	}
	r.fail(reason, message)
	r.finish(0)
	return r.rep
}
