// The knobs of the driftd mixin. Override any of them:
//
//   (import 'github.com/driftd/driftd/deploy/mixin/mixin.libsonnet') + {
//     _config+:: { driftdSelector: 'job="driftd"', findingFor: '5m' },
//   }
//
// The defaults generate the shipped deploy/prometheus/alerts.yml and
// deploy/grafana/driftd.json (`make mixin`).
{
  _config+:: {
    // Which Prometheus job(s) scrape driftd: a matcher on job added to every
    // driftd_* selector of the rules and the dashboard, e.g. 'job="driftd"'
    // or 'job=~"driftd|driftd-shard-.*"'. Empty by default: every driftd_*
    // series is driftd's own whatever the job name. The dashboard's job
    // variable offers the jobs this selector leaves.
    jobSelector: '',
    // Other label matchers added to every driftd_* selector, e.g.
    // 'namespace="monitoring"'.
    driftdSelector: '',

    // One Prometheus (Thanos, Mimir, a central Prometheus fed by each
    // cluster's) for several clusters: the label that names a series'
    // cluster. The rules' joins always match on it (empty on both sides
    // when a series has none), so two clusters' driftd never mix;
    // showMultiCluster shows the dashboard's cluster variable (hidden
    // otherwise, and then left out of its queries).
    showMultiCluster: false,
    clusterLabel: 'cluster',

    // `for:` of each alert. A finding's gauge changes only when a run ends,
    // so these assume the usual production schedule of about @every 5m:
    // findingFor is "still there after two or three runs".
    findingFor: '10m',  // MCPToolMissing, MCPBreakingSchemaDrift
    protocolUnsupportedFor: '15m',
    toolSetVariesFor: '30m',  // long: a rolling deploy varies briefly
    anonymousAccessFor: '15m',
    poisoningFor: '5m',
    discoveryFailingFor: '15m',
    probeFailingFor: '15m',
    // One refused refresh is already definitive (no retry helps), so not
    // three runs: one period of @every 5m, enough that a login already
    // under way pages no one.
    loginExpiredFor: '5m',
    probeStaleFor: '5m',
    reloadFailedFor: '10m',
    seriesDroppedFor: '30m',
    ignoresStaleFor: '1h',

    // How long a per-tool finding keeps its alert firing while the
    // target's runs fail (the series' last sample is newer than the last
    // successful run).
    findingHoldWindow: '6h',
    // How long a per-tool finding's page outlives its series: a restart
    // of driftd that spans a scrape (a failed scrape marks every series
    // stale) or a pod replaced on Kubernetes leaves a gap this long at
    // most without resolving the page; a resolved finding's page ends
    // this much later.
    findingGapWindow: '2m',
    // A target is stale when no run ended for this many schedule periods.
    probeStalePeriods: 3,
    // DriftdNewFindings and DriftdStateWriteFailing look back this far.
    newFindingsWindow: '10m',
    stateWriteWindow: '15m',

    // The alerts' severity labels, for Alertmanager routing.
    pageSeverity: 'critical',
    ticketSeverity: 'warning',
    recordSeverity: 'info',

    // runbook_url of each alert: this with the alert name in lower case.
    runbookURLPattern: 'https://github.com/driftd/driftd/blob/main/docs/runbooks.md#%s',

    // The dashboard.
    dashboardUID: 'driftd-overview',
    dashboardTitle: 'driftd',
    dashboardTags: ['driftd', 'mcp'],
    dashboardRefresh: '1m',
    dashboardTimeFrom: 'now-6h',
    dashboardTimezone: '',
  },
}
