package metrics

// family is one per-target family: its name (a counter's with _total, as
// its samples are named), type and help. Their names, labels and help are
// what the shipped alerts, rules and dashboard read (docs/metrics.md).
type family struct{ name, typ, help string }

// The per-target families, in the order /metrics writes them.
const (
	famFinding = iota
	famFindingDropped
	famFindings
	famIgnored
	famOpened
	famResolved
	famStale
	famListItems
	famOAuthLogin
	famOAuthExpiry
	famOAuthIssued
	famOAuthRequests
	famFailures
	famInterval
	famLastDuration
	famLastRun
	famLastSuccess
	famSkipped
	famSuccess
	famProbes
	famServedChanges
	famInfo
	famRestored
	famTools
	numFamilies
)

var families = [numFamilies]family{
	famFinding:        {"driftd_finding", "gauge", "One active finding that names a tool, prompt, resource or resource template (kind), capped per target."},
	famFindingDropped: {"driftd_finding_series_dropped", "gauge", "Active findings with a tool left out of driftd_finding by the per-target cap (targets where it dropped any)."},
	famFindings:       {"driftd_findings", "gauge", "Active findings by rule and severity."},
	famIgnored:        {"driftd_findings_ignored", "gauge", "Findings suppressed by ignore entries on the last run (targets with ignore entries)."},
	famOpened:         {"driftd_findings_opened_total", "counter", "Findings that appeared, by rule and severity."},
	famResolved:       {"driftd_findings_resolved_total", "counter", "Findings that went away, by rule and severity."},
	famStale:          {"driftd_ignores_stale", "gauge", "Ignore entries that matched nothing or have expired (targets with ignore entries)."},
	famListItems:      {"driftd_list_items", "gauge", "Prompts, resources and resource templates (kind) declared in the manifest and served on the last successful run; only for lists the run read."},
	famOAuthLogin:     {"driftd_oauth_login_required", "gauge", "1 while the target's login session cannot serve and a person must run driftd auth login TARGET (targets with oauth.login)."},
	famOAuthExpiry:    {"driftd_oauth_token_expiry_timestamp_seconds", "gauge", "When the access token the target's last run presented expires (targets with an oauth identity)."},
	famOAuthIssued:    {"driftd_oauth_token_issued_timestamp_seconds", "gauge", "When driftd received the access token the target's last run presented; time() minus it is the token's age."},
	famOAuthRequests:  {"driftd_oauth_token_requests_total", "counter", "Token requests the target's runs sent, by outcome: success, the OAuth error code, other_error, or failed (no OAuth answer)."},
	famFailures:       {"driftd_probe_failures_total", "counter", "Failed probe runs by reason, each reason created at its first failure."},
	famInterval:       {"driftd_probe_interval_seconds", "gauge", "The current period of the target's schedule."},
	famLastDuration:   {"driftd_probe_last_duration_seconds", "gauge", "Duration of the target's last run."},
	famLastRun:        {"driftd_probe_last_run_timestamp_seconds", "gauge", "When the target's last run ended."},
	famLastSuccess:    {"driftd_probe_last_success_timestamp_seconds", "gauge", "When the target's last successful run ended."},
	famSkipped:        {"driftd_probe_skipped_total", "counter", "Runs that were due while the previous run of the target still ran, created at the first."},
	famSuccess:        {"driftd_probe_success", "gauge", "Whether the last run of the target could list and compare its tools."},
	famProbes:         {"driftd_probes_total", "counter", "Probe runs by result."},
	famServedChanges:  {"driftd_served_changes_total", "counter", "Run-to-run changes of the served tool set, by CHG id."},
	famInfo:           {"driftd_target_info", "gauge", "Identity of a target: its classification, the protocol revision and server it established, and its configured labels."},
	famRestored:       {"driftd_target_restored", "gauge", "1 while the target's series are its last run saved before driftd started (no run since start); absent otherwise."},
	famTools:          {"driftd_tools", "gauge", "Tools declared in the manifest and served on the last successful listing."},
}
