// Package probe runs one probe of one target: discovery and era, the
// paginated tool list, a second connection, conformance, drift against the
// declared manifest and the authentication posture, returned as a Report.
package probe

import (
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/mcp"
)

// Report is the artifact of one run (DESIGN §15). Fields may be added,
// never renamed.
type Report struct {
	DriftdVersion          string              `json:"driftd_version"`
	Target                 string              `json:"target"`
	BaseURL                string              `json:"base_url"`
	StartedAt              time.Time           `json:"started_at"`
	DurationSeconds        float64             `json:"duration_seconds"`
	Success                bool                `json:"success"`
	FailureReason          mcp.Reason          `json:"failure_reason"`
	FailureMessage         string              `json:"failure_message,omitempty"`
	Classification         Classification      `json:"classification"`
	ProtocolRevision       Revision            `json:"protocol_revision"`
	Era                    string              `json:"era"`
	ServerInfo             *mcp.Implementation `json:"server_info"`
	AuthorizationPresented bool                `json:"authorization_presented"`
	AuthorizationHeaders   []string            `json:"authorization_headers"`
	// ComparedAgainst is "manifest" or, for a baseline-mode target,
	// "baseline"; empty when nothing was declared (capture, a baseline
	// not yet recorded).
	ComparedAgainst string     `json:"compared_against,omitempty"`
	Tools           ToolCounts `json:"tools"`
	// Prompts, Resources and ResourceTemplates are set when the run listed
	// them: the manifest declares them or the server advertises them.
	Prompts           *ToolCounts `json:"prompts,omitempty"`
	Resources         *ToolCounts `json:"resources,omitempty"`
	ResourceTemplates *ToolCounts `json:"resource_templates,omitempty"`
	Drift             Section     `json:"drift"`
	Conformance       Section     `json:"conformance"`
	AuthPosture       AuthPosture `json:"auth_posture"`
	// Security holds the MCP-SEC findings: what the served texts say to
	// a model (docs/security.md).
	Security Section `json:"security"`
	// Seed and Invocation are set when the target configures tools/call.
	Seed       *uint64             `json:"seed,omitempty"`
	Invocation *Invocation         `json:"invocation,omitempty"`
	Findings   []catalogue.Finding `json:"findings"`
	// FindingsOmitted counts, per rule and severity, the findings past
	// catalogue.MaxPerRule that Findings does not list; Summary counts
	// them. IgnoredOmitted does the same for Ignored.
	FindingsOmitted []catalogue.Omitted     `json:"findings_omitted"`
	Ignored         []catalogue.Finding     `json:"ignored"`
	IgnoredOmitted  int                     `json:"ignored_omitted"`
	StaleIgnores    []catalogue.StaleIgnore `json:"stale_ignores"`
	// ServedChanges are the run-to-run changes of the served set; only the
	// daemon, which keeps the previous run, fills them.
	ServedChanges []ServedChange   `json:"served_changes"`
	Summary       catalogue.Counts `json:"summary"`

	// served holds the served tools for capture; not part of the artifact.
	served []mcp.Tool
	// servedItems holds the other served lists, by kind, for capture.
	servedItems map[mcp.Kind][]mcp.Item
	// recall is what the next run may recall (Recall); servedAsBefore
	// says the listing was the last run's, unread (ServedAsBefore).
	recall         Recall
	servedAsBefore bool
}

// ServedItems returns the items of k the server returned on this run, in
// served order, and whether the run listed k at all (a list answered
// with -32601 is listed and empty).
func (r *Report) ServedItems(k mcp.Kind) ([]mcp.Item, bool) {
	items, ok := r.servedItems[k]
	return items, ok
}

// ListCounts returns the counts of the list of k; nil for a kind the run
// did not list.
func (r *Report) ListCounts(k mcp.Kind) *ToolCounts { return r.countsOf(k) }

// countsOf returns the counts of the list of k; nil for a kind not listed.
func (r *Report) countsOf(k mcp.Kind) *ToolCounts {
	switch k {
	case mcp.KindPrompt:
		return r.Prompts
	case mcp.KindResource:
		return r.Resources
	case mcp.KindResourceTemplate:
		return r.ResourceTemplates
	}
	return &r.Tools
}

func (r *Report) setCounts(k mcp.Kind, c *ToolCounts) {
	switch k {
	case mcp.KindPrompt:
		r.Prompts = c
	case mcp.KindResource:
		r.Resources = c
	case mcp.KindResourceTemplate:
		r.ResourceTemplates = c
	}
}

// Served returns the tools the server returned on this run, in served order.
func (r *Report) Served() []mcp.Tool { return r.served }

// Copy returns a copy of the report that does not hold the served
// definitions: what a daemon keeps between runs is the report's findings
// and figures, never the megabytes a server returned (the state's
// snapshot file holds those).
func (r *Report) Copy() *Report {
	out := *r
	out.served, out.servedItems = nil, nil
	return &out
}

// ServedChange is one change of the served set since the previous run.
type ServedChange struct {
	Change    string `json:"change"`
	Tool      string `json:"tool"`
	Direction string `json:"direction,omitempty"`
	Pointer   string `json:"pointer,omitempty"`
	Message   string `json:"message,omitempty"`
}

// Classification is the environment class of the target and why.
type Classification struct {
	Class  string `json:"class"`
	Reason string `json:"reason"`
}

// Revision is the protocol revision the run established; Value is nil when
// none was (a legacy server, or a failure before discovery).
type Revision struct {
	Value  *string `json:"value"`
	Reason string  `json:"reason"`
}

// ToolCounts summarises the listing of tools, and of each other list the
// run read (prompts, resources, resource templates).
type ToolCounts struct {
	Declared       int  `json:"declared"`
	Served         int  `json:"served"`
	Pages          int  `json:"pages"`
	PageCapReached bool `json:"page_cap_reached"`
	// SecondConnection is "same", "order_varies", "set_varies",
	// "failed: <reason>" or "" when not checked.
	SecondConnection string `json:"second_connection"`
	// MethodNotFound is set when the list's method answered -32601: the
	// server serves no such list (never set for tools).
	MethodNotFound bool `json:"method_not_found,omitempty"`
}

// Section holds the findings of one family.
type Section struct {
	Findings []catalogue.Finding `json:"findings"`
}

// AuthPosture records who the server talks to, whether or not anything is
// wrong.
type AuthPosture struct {
	// AnonymousList is "served", "refused", "indeterminate", "skipped" or
	// "not_checked".
	AnonymousList       string         `json:"anonymous_list"`
	AnonymousToolsEqual *bool          `json:"anonymous_tools_equal"`
	Challenge           *mcp.Challenge `json:"challenge"`
	// Surface is what the authorization surface check found, when a
	// refusal made it run (docs/security.md#the-authorization-surface).
	Surface *AuthSurface `json:"surface,omitempty"`
	// OAuth is what the target's machine identity did this run, when it
	// has one (docs/authentication.md). Never a token or a secret.
	OAuth    *OAuthUse           `json:"oauth,omitempty"`
	Findings []catalogue.Finding `json:"findings"`
}

// OAuthUse is a run's use of its target's oauth block.
type OAuthUse struct {
	// Issuer is the authorization server's issuer (or the configured
	// token_url), redacted; empty when discovery found none.
	Issuer string `json:"issuer,omitempty"`
	// Grant is client_credentials or JWT-bearer; ClientAuth the token
	// endpoint authentication method.
	Grant      string `json:"grant,omitempty"`
	ClientAuth string `json:"client_auth,omitempty"`
	// Scheme is how the token was presented: Bearer or DPoP.
	Scheme string `json:"scheme,omitempty"`
	// TokenRequests are the outcomes of the token requests this run sent
	// (none when a cached token served it).
	TokenRequests []string `json:"token_requests"`
	// TokenIssuedAt and TokenExpiresAt are the used token's times.
	TokenIssuedAt  *time.Time `json:"token_issued_at,omitempty"`
	TokenExpiresAt *time.Time `json:"token_expires_at,omitempty"`
	// Error says why no token could be had.
	Error string `json:"error,omitempty"`
	// LoginRequired, for a login target (nil otherwise), is true when its
	// session could not serve and a person must run driftd auth login.
	LoginRequired *bool `json:"login_required,omitempty"`
}

// AuthSurface is where the authorization surface check found each
// document, every URL in its redacted form; empty where none was found.
type AuthSurface struct {
	ProtectedResourceMetadata string `json:"protected_resource_metadata"`
	// AuthorizationServers are the checked ones, in the order listed.
	AuthorizationServers []AuthServerSurface `json:"authorization_servers"`
	// Fetches is the number of GETs the check sent.
	Fetches int `json:"fetches"`
}

// AuthServerSurface is one authorization server: its issuer and the URL
// its metadata was found at.
type AuthServerSurface struct {
	Issuer   string `json:"issuer"`
	Metadata string `json:"metadata"`
}

// OAuthUse returns what the run's machine identity did, nil for a report
// that has none (or a nil report).
func (r *Report) OAuthUse() *OAuthUse {
	if r == nil {
		return nil
	}
	return r.AuthPosture.OAuth
}

// Failed reports whether nothing could be compared: the exit code 3 case.
func (r *Report) Failed() bool { return !r.Success }

// MaxSeverity returns the rank of the most severe finding, 0 for none.
func (r *Report) MaxSeverity() int {
	m := 0
	for _, f := range r.Findings {
		m = max(m, f.Severity.Rank())
	}
	return m
}
