// The Grafana dashboard, deploy/grafana/driftd.json when generated with the
// default _config. Panels are laid out on Grafana's 24-column grid; ids
// follow the order of the panels.
local lib = import 'lib.libsonnet';

local ds = { type: 'prometheus', uid: '${datasource}' };

// 0 → FAILED in red, 1 → OK in green: driftd's 0/1 gauges.
local okFailed = [{
  type: 'value',
  options: {
    '0': { text: 'FAILED', color: 'red', index: 0 },
    '1': { text: 'OK', color: 'green', index: 1 },
  },
}];

local steps(list) = { mode: 'absolute', steps: list };
local green = { color: 'green', value: null };

local instant(expr, refId='A') = {
  datasource: ds,
  expr: expr,
  refId: refId,
  legendFormat: '__auto',
  instant: true,
  range: false,
};
local tableQuery(expr, refId='A') = instant(expr, refId) + { format: 'table' };
local range(expr, legend, refId='A') = {
  datasource: ds,
  expr: expr,
  refId: refId,
  legendFormat: legend,
  range: true,
};

local panel(type, title, description, gridPos, targets) = {
  type: type,
  title: title,
  description: description,
  datasource: ds,
  gridPos: gridPos,
  targets: targets,
};

local row(title, y) = {
  type: 'row',
  title: title,
  collapsed: false,
  gridPos: { h: 1, w: 24, x: 0, y: y },
  panels: [],
};

local stat(title, description, gridPos, expr, thresholds=[green], unit='none', mappings=null) =
  panel('stat', title, description, gridPos, [instant(expr)]) + {
    fieldConfig: {
      defaults: {
        unit: unit,
        color: { mode: 'thresholds' },
        thresholds: steps(thresholds),
      } + (if mappings == null then {} else { mappings: mappings }),
      overrides: [],
    },
    options: {
      reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
      colorMode: 'background',
      graphMode: 'none',
      textMode: 'auto',
      justifyMode: 'auto',
      orientation: 'auto',
    },
  };

local table(title, description, gridPos, targets, transformations, overrides=[]) =
  panel('table', title, description, gridPos, targets) + {
    fieldConfig: {
      defaults: { custom: { align: 'auto', filterable: true } },
      overrides: overrides,
    },
    options: {
      showHeader: true,
      cellHeight: 'sm',
      footer: { show: false, reducer: ['sum'], fields: '' },
    },
    transformations: transformations,
  };

// lines or bars (fillOpacity 10 or 80); extra is merged into the field
// defaults, custom into their custom block.
local timeseries(title, description, gridPos, targets, unit='none', bars=false, stacked=false, custom={}, extra={}) =
  panel('timeseries', title, description, gridPos, targets) + {
    fieldConfig: {
      defaults: {
        unit: unit,
        custom: {
          drawStyle: if bars then 'bars' else 'line',
          lineWidth: 1,
          fillOpacity: if bars then 80 else 10,
          showPoints: 'never',
          spanNulls: true,
        } + (if stacked then { stacking: { mode: 'normal', group: 'A' } } else {}) + custom,
        color: { mode: 'palette-classic' },
      } + extra,
      overrides: [],
    },
    options: {
      legend: { displayMode: 'table', placement: 'right', showLegend: true, calcs: ['lastNotNull'] },
      tooltip: { mode: 'multi', sort: 'desc' },
    },
  };

local pos(h, w, x, y) = { h: h, w: w, x: x, y: y };

{
  grafanaDashboards+:: {
    local cfg = $._config,
    // The job and cluster variables, as matchers every query carries: the
    // configured selectors narrow what the variables offer, the variables
    // what the panels show.
    local clusterMatcher = '%s=~"$cluster"' % cfg.clusterLabel,
    local scope = std.join(', ', ['job=~"$job"'] + (if cfg.showMultiCluster then [clusterMatcher] else [])),
    local dcfg = cfg { driftdSelector: std.join(', ', std.filter(function(m) m != '', [cfg.driftdSelector, scope])) },
    // A driftd_* selector: the configured matchers, the job (and cluster)
    // and the target variable.
    local t(name, more='') = lib.metric(dcfg, name, std.join(', ', ['target=~"$target"'] + (if more == '' then [] else [more])), ', '),
    // A driftd_* selector without the target variable.
    local all(name) = lib.metric(dcfg, name, '', ', '),
    // A variable's query: the values of label on driftd_build_info (every
    // driftd exports it) or driftd_target_info, within matchers.
    local queryVar(name, label, metric, matchers, hide=0, allValue='.+') = {
      local q = 'label_values(%s, %s)' % [lib.metric(cfg { driftdSelector: std.join(', ', std.filter(function(m) m != '', [cfg.driftdSelector, matchers])) }, metric, '', ', '), label],
      name: name,
      label: label,
      type: 'query',
      datasource: ds,
      definition: q,
      query: { qryType: 1, query: q, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
      current: {},
      hide: hide,
      includeAll: true,
      allValue: allValue,
      multi: true,
      options: [],
      refresh: 2,
      regex: '',
      skipUrlSync: false,
      sort: 1,
    },
    // Counter increases over a window, counting a series born inside it
    // with its whole value: driftd's finding counters appear at their
    // first opening, already at 1, which increase() alone would miss.
    local opened(c, window) = '(%(c)s unless %(c)s offset %(w)s) or increase(%(c)s[%(w)s])' % { c: c, w: window },

    local panels = [
      row('Overview', 0),
      stat('Targets', 'Targets probed, summed over every driftd instance (shard).', pos(4, 4, 0, 1),
           'sum(%s)' % all('driftd_targets')),
      stat('Probing', 'Selected targets whose last run listed and compared the tools.', pos(4, 4, 4, 1),
           'sum(%s)' % t('driftd_probe_success')),
      stat('Failing', 'Selected targets whose last run failed (nothing was compared).', pos(4, 4, 8, 1),
           'count(%s == 0) or vector(0)' % t('driftd_probe_success'),
           thresholds=[green, { color: 'red', value: 1 }]),
      stat('ERROR findings', 'Active findings of severity ERROR on the selected targets.', pos(4, 4, 12, 1),
           'sum(%s) or vector(0)' % t('driftd_findings', 'severity="ERROR"'),
           thresholds=[green, { color: 'red', value: 1 }]),
      stat('All findings', 'Active findings of every severity on the selected targets.', pos(4, 4, 16, 1),
           'sum(%s) or vector(0)' % t('driftd_findings'),
           thresholds=[green, { color: 'orange', value: 1 }]),
      stat('Config reload', 'Whether the last configuration reload succeeded, on every instance (the worst one shown).', pos(4, 4, 20, 1),
           'min(%s)' % all('driftd_config_last_reload_successful'),
           thresholds=[{ color: 'red', value: null }, { color: 'green', value: 1 }], mappings=okFailed),

      row('Targets', 5),
      table('Targets', "One row per target: the last run's outcome, how long since its last success, its active findings and what the server says it is.", pos(8, 24, 0, 6), [
        tableQuery('max by (target) (%s)' % t('driftd_probe_success'), 'A'),
        tableQuery('time() - max by (target) (%s)' % t('driftd_probe_last_success_timestamp_seconds'), 'B'),
        tableQuery('sum by (target) (%s)' % t('driftd_findings'), 'C'),
        tableQuery('max by (target, classification, protocol_revision, server_name, server_version) (%s)' % t('driftd_target_info'), 'D'),
      ], [
        { id: 'merge', options: {} },
        { id: 'organize', options: {
          excludeByName: { Time: true, 'Value #D': true },
          indexByName: { target: 0, 'Value #A': 1, 'Value #B': 2, 'Value #C': 3, classification: 4, protocol_revision: 5, server_name: 6, server_version: 7 },
          renameByName: { 'Value #A': 'probe', 'Value #B': 'since last success', 'Value #C': 'active findings' },
        } },
      ], overrides=[
        { matcher: { id: 'byName', options: 'probe' }, properties: [
          { id: 'mappings', value: okFailed },
          { id: 'custom.cellOptions', value: { type: 'color-background' } },
        ] },
        { matcher: { id: 'byName', options: 'since last success' }, properties: [{ id: 'unit', value: 's' }] },
      ]),
      panel('state-timeline', 'Probe state', 'driftd_probe_success per target over time: green when the run listed and compared the tools.', pos(7, 24, 0, 14), [
        range(t('driftd_probe_success'), '{{target}}'),
      ]) + {
        fieldConfig: {
          defaults: {
            mappings: okFailed,
            thresholds: steps([{ color: 'red', value: null }, { color: 'green', value: 1 }]),
            color: { mode: 'thresholds' },
          },
          overrides: [],
        },
        options: { showValue: 'never', mergeValues: true, rowHeight: 0.8, legend: { showLegend: false } },
      },

      row('Findings', 21),
      table('Active findings by rule and severity', 'driftd_findings: active findings on the selected targets, by rule and severity.', pos(9, 12, 0, 22), [
        tableQuery('sum by (rule, severity) (%s)' % t('driftd_findings')),
      ], [
        { id: 'organize', options: { excludeByName: { Time: true }, renameByName: { Value: 'findings' } } },
        { id: 'sortBy', options: { sort: [{ field: 'findings', desc: true }] } },
      ]),
      timeseries('Active findings by severity', 'driftd_findings over time, stacked by severity.', pos(9, 12, 12, 22), [
        range('sum by (severity) (%s)' % t('driftd_findings'), '{{severity}}'),
      ], stacked=true),
      timeseries('Findings opened and resolved', "increase of driftd_findings_opened_total and driftd_findings_resolved_total: what just broke and what just got fixed (resolved drawn below zero). A series that appeared within the interval counts its whole value: driftd's finding counters appear at their first opening, already at 1, which increase() alone would miss. A target's initial findings (its first runs in a new state dir) are not openings: their counters appear at 0.", pos(8, 12, 0, 31), [
        range('sum by (severity) (%s)' % opened(t('driftd_findings_opened_total'), '$__rate_interval'), 'opened {{severity}}', 'A'),
        range('-sum by (severity) (%s)' % opened(t('driftd_findings_resolved_total'), '$__rate_interval'), 'resolved {{severity}}', 'B'),
      ], bars=true),
      timeseries('Opened by rule', 'Findings opened per rule over the chosen window. Counts first openings too (a counter that appeared in the window counts its whole value), not a target\'s initial findings (its first runs in a new state dir: their counters appear at 0).', pos(8, 12, 12, 31), [
        range('sum by (rule) (%s) > 0' % opened(t('driftd_findings_opened_total'), '$window'), '{{rule}}'),
      ]),
      table('Findings per tool', 'driftd_finding: one row per active finding that names a tool, prompt, resource or resource template (kind; capped at per_tool_series_limit per target; see dropped series below).', pos(8, 12, 0, 39), [
        tableQuery(t('driftd_finding')),
      ], [
        { id: 'organize', options: {
          excludeByName: { Time: true, Value: true, __name__: true, job: true, instance: true },
          indexByName: { target: 0, kind: 1, tool: 2, rule: 3, severity: 4 },
        } },
      ]),
      timeseries('Served-set changes', 'driftd_served_changes_total: run-to-run changes of what the servers serve, by CHG id, whether or not a manifest declares them.', pos(8, 12, 12, 39), [
        range('sum by (change) (increase(%s[$__rate_interval])) > 0' % t('driftd_served_changes_total'), '{{change}}'),
      ], bars=true, stacked=true),
      timeseries('Ignored findings and stale ignores', 'driftd_findings_ignored: findings suppressed by an ignore rule; driftd_ignores_stale: ignore rules past their expiry or matching nothing.', pos(7, 12, 0, 47), [
        range('sum by (target) (%s)' % t('driftd_findings_ignored'), 'ignored {{target}}', 'A'),
        range('sum by (target) (%s)' % t('driftd_ignores_stale'), 'stale ignores {{target}}', 'B'),
      ]),
      timeseries('Finding series dropped', 'driftd_finding series not exported because a target hit per_tool_series_limit.', pos(7, 12, 12, 47), [
        range('%s > 0' % t('driftd_finding_series_dropped'), '{{target}}'),
      ]),

      row('Probes', 54),
      timeseries('Probe success ratio', 'Share of runs that succeeded over the chosen window, per target.', pos(8, 12, 0, 55), [
        range('sum by (target) (increase(%s[$window])) / sum by (target) (increase(%s[$window]))' % [t('driftd_probes_total', 'result="success"'), t('driftd_probes_total')], '{{target}}'),
      ], unit='percentunit', extra={ min: 0, max: 1 }),
      timeseries('Probe failures by reason', 'driftd_probe_failures_total by the fixed reason set (dns, connect, tls, timeout, http_status, auth_required, …).', pos(8, 12, 12, 55), [
        range('sum by (reason) (increase(%s[$__rate_interval])) > 0' % t('driftd_probe_failures_total'), '{{reason}}'),
      ], bars=true, stacked=true),
      timeseries('Probe duration', 'Quantiles of driftd_probe_duration_seconds over the chosen window, all targets of the instance (the histogram has a target label only with --metrics.per-target-histograms; per target, see the next panel).', pos(8, 12, 0, 63), [
        range('histogram_quantile(%s, sum by (le) (rate(%s[$window])))' % [q.q, all('driftd_probe_duration_seconds_bucket')], q.legend, q.ref)
        for q in [{ q: '0.5', legend: 'p50', ref: 'A' }, { q: '0.9', legend: 'p90', ref: 'B' }, { q: '0.99', legend: 'p99', ref: 'C' }]
      ], unit='s'),
      timeseries('Probe duration by target', "The longest and the mean of each target's run durations over the chosen window (driftd_probe_last_duration_seconds).", pos(8, 12, 12, 63), [
        range('max_over_time(%s[$window])' % t('driftd_probe_last_duration_seconds'), 'max {{target}}', 'A'),
        range('avg_over_time(%s[$window])' % t('driftd_probe_last_duration_seconds'), 'mean {{target}}', 'B'),
      ], unit='s'),
      timeseries('Staleness', 'Time since the last run, in schedule periods (driftd_probe_interval_seconds): above %d a target is not being probed.' % cfg.probeStalePeriods, pos(8, 12, 0, 71), [
        range('(time() - %s) / %s' % [t('driftd_probe_last_run_timestamp_seconds'), t('driftd_probe_interval_seconds')], '{{target}}'),
      ], custom={ fillOpacity: 0, thresholdsStyle: { mode: 'line' } }, extra={
        thresholds: steps([green, { color: 'red', value: cfg.probeStalePeriods }]),
      }),
      timeseries('Skipped runs', 'driftd_probe_skipped_total: a run was due while the previous one of the same target still ran.', pos(8, 12, 12, 71), [
        range('sum by (target) (increase(%s[$window])) > 0' % t('driftd_probe_skipped_total'), '{{target}}'),
      ]),
      timeseries('MCP requests', 'driftd_mcp_requests_total per method and outcome (success or a failure reason), all targets.', pos(8, 12, 0, 79), [
        range('sum by (method, outcome) (rate(%s[$__rate_interval]))' % all('driftd_mcp_requests_total'), '{{method}} {{outcome}}'),
      ], unit='reqps'),
      timeseries('MCP request duration p90', 'The 90th percentile of driftd_mcp_request_duration_seconds per method, all targets.', pos(8, 12, 12, 79), [
        range('histogram_quantile(0.9, sum by (method, le) (rate(%s[$window])))' % all('driftd_mcp_request_duration_seconds_bucket'), '{{method}}'),
      ], unit='s'),

      row('Tools', 87),
      timeseries('Tools, prompts and resources declared and served', 'driftd_tools: tools the manifest declares against tools the server serves, per target; driftd_list_items: the same for prompts, resources and resource templates (kind), on targets whose runs list them.', pos(8, 12, 0, 88), [
        range('sum by (target, source) (%s)' % t('driftd_tools'), '{{target}} tools {{source}}'),
        range('sum by (target, kind, source) (%s)' % t('driftd_list_items'), '{{target}} {{kind}} {{source}}', 'B'),
      ]),
      table('Declared versus served', 'Per target: tools declared, tools served, and the difference (declared minus served).', pos(8, 12, 12, 88), [
        tableQuery('sum by (target) (%s)' % t('driftd_tools', 'source="declared"'), 'A'),
        tableQuery('sum by (target) (%s)' % t('driftd_tools', 'source="served"'), 'B'),
        tableQuery('sum by (target) (%s) - sum by (target) (%s)' % [t('driftd_tools', 'source="declared"'), t('driftd_tools', 'source="served"')], 'C'),
      ], [
        { id: 'merge', options: {} },
        { id: 'organize', options: {
          excludeByName: { Time: true },
          renameByName: { 'Value #A': 'declared', 'Value #B': 'served', 'Value #C': 'declared − served' },
        } },
      ]),

      row('driftd', 96),
      timeseries('Config reload status', 'driftd_config_last_reload_successful per instance: 0 means the last reload failed and the previous configuration keeps running.', pos(7, 8, 0, 97), [
        range(all('driftd_config_last_reload_successful'), '{{instance}}'),
      ], extra={ mappings: okFailed, min: 0, max: 1 }),
      stat('Last successful reload', "Time since the oldest of the instances' last successful reload.", pos(4, 4, 8, 97),
           'time() - min(%s)' % all('driftd_config_last_reload_success_timestamp_seconds'), unit='s'),
      table('Build', 'driftd_build_info per instance.', pos(7, 12, 12, 97), [
        tableQuery(all('driftd_build_info')),
      ], [
        { id: 'organize', options: { excludeByName: { Time: true, Value: true, __name__: true } } },
      ]),
      timeseries('Internal failures', 'State files that could not be written or were found corrupt, OTLP exports that failed, and reads refused because the pool of response bytes in flight was spent (each failed its run as response_too_large).', pos(7, 12, 0, 104), [
        range('sum(increase(%s[$__rate_interval]))' % all('driftd_state_write_failures_total'), 'state write', 'A'),
        range('sum(increase(%s[$__rate_interval]))' % all('driftd_state_read_failures_total'), 'state read (corrupt)', 'B'),
        range('sum(increase(%s[$__rate_interval]))' % all('driftd_otlp_export_failures_total'), 'OTLP export', 'C'),
        range('sum(increase(%s[$__rate_interval]))' % all('driftd_inflight_refusals_total'), 'in-flight pool refusal', 'D'),
      ], bars=true),
      timeseries('Response bytes in flight', 'driftd_inflight_response_bytes: what the runs in flight hold, against the pool (global.max_inflight_bytes, by default a quarter of the container memory limit); a run above its share fails when the pool is spent. No series without a pool.', pos(7, 12, 12, 104), [
        range(all('driftd_inflight_response_bytes'), '{{instance}} held', 'A'),
        range(all('driftd_inflight_response_bytes_limit'), '{{instance}} pool', 'B'),
      ], unit='bytes'),

      row('Discovery and posture', 111),
      timeseries('Discovered targets per source', 'driftd_sd_targets: the targets each discovery source (target_files, registry_sd, kubernetes_sd) finds, its last good set; rejected: found but not probed (a check failed, or the name is taken).', pos(7, 12, 0, 112), [
        range('sum by (source) (%s)' % all('driftd_sd_targets'), '{{source}}', 'A'),
        range('sum by (source) (%s)' % all('driftd_sd_rejected_targets'), '{{source}} rejected', 'B'),
      ]),
      timeseries('Discovery refresh status', 'driftd_sd_last_refresh_successful per source: 0 means the last refresh failed and the source keeps its last targets (alert DriftdDiscoveryFailing).', pos(7, 12, 12, 112), [
        range(all('driftd_sd_last_refresh_successful'), '{{instance}} {{source}}'),
      ], extra={ mappings: okFailed, min: 0, max: 1 }),
      table('Posture findings (MCP-SEC)', 'Active MCP-SEC findings per target, rule and severity: texts a server serves that carry invisible characters, terminal escapes, look-alike names, instructions to the model, secret lures, encoded blobs, links or sudden growth (docs/security.md). ERROR ones raise MCPToolPoisoningSuspected.', pos(8, 24, 0, 119), [
        tableQuery('sum by (target, rule, severity) (%s)' % t('driftd_findings', 'rule=~"MCP-SEC-.*"')),
      ], [
        { id: 'organize', options: { excludeByName: { Time: true }, renameByName: { Value: 'findings' } } },
      ]),
    ],

    'driftd.json': {
      annotations: { list: [{
        builtIn: 1,
        datasource: { type: 'grafana', uid: '-- Grafana --' },
        enable: true,
        hide: true,
        iconColor: 'rgba(0, 211, 255, 1)',
        name: 'Annotations & Alerts',
        type: 'dashboard',
      }] },
      description: 'driftd: MCP servers probed against their manifests — targets, findings, probes, tools, reloads.',
      editable: true,
      fiscalYearStartMonth: 0,
      graphTooltip: 1,
      id: null,
      links: [],
      panels: std.mapWithIndex(function(i, p) p { id: i + 1 }, panels),
      refresh: cfg.dashboardRefresh,
      schemaVersion: 39,
      tags: cfg.dashboardTags,
      templating: { list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
          includeAll: false,
          multi: false,
          options: [],
          refresh: 1,
          regex: '',
          skipUrlSync: false,
        },
        // Hidden unless showMultiCluster; .* keeps series without the label.
        queryVar('cluster', cfg.clusterLabel, 'driftd_build_info', '', hide=if cfg.showMultiCluster then 0 else 2, allValue='.*') + { label: 'Cluster' },
        queryVar('job', 'job', 'driftd_build_info', if cfg.showMultiCluster then clusterMatcher else '') + { label: 'Job' },
        queryVar('target', 'target', 'driftd_target_info', scope, allValue='.*') + { label: 'Target' },
        {
          local choices = ['15m', '30m', '1h', '6h', '12h', '1d'],
          local default = '1h',
          name: 'window',
          label: 'Window',
          type: 'interval',
          query: std.join(',', choices),
          current: { selected: true, text: default, value: default },
          hide: 0,
          auto: false,
          auto_count: 30,
          auto_min: '10s',
          options: [{ selected: c == default, text: c, value: c } for c in choices],
          refresh: 2,
          skipUrlSync: false,
        },
      ] },
      time: { from: cfg.dashboardTimeFrom, to: 'now' },
      timepicker: {},
      timezone: cfg.dashboardTimezone,
      title: cfg.dashboardTitle,
      uid: cfg.dashboardUID,
      version: 1,
      weekStart: '',
    },
  },
}
