// The recording rules the page alerts read. Each page alert reads one
// series whose name says what it is (driftd:tool_missing:active, …), so
// whoever is paged reads `expr: driftd:tool_missing:active` and finds here,
// one rule a step, how "active" is decided. Names follow Prometheus'
// level:metric:operations: level driftd (a target's own labels, nothing
// aggregated away), the metric, then what was done to it.
local lib = import 'lib.libsonnet';

{
  // The findings that page, one entry per page alert: the driftd_finding(s)
  // matchers it reads and the series it reads them through.
  _pageFindings:: {
    toolMissing: {
      alert: 'MCPToolMissing',
      record: 'driftd:tool_missing:active',
      matchers: 'rule="MCP-DRIFT-TOOL-MISSING"',
    },
    schemaBreaking: {
      alert: 'MCPBreakingSchemaDrift',
      record: 'driftd:schema_breaking:active',
      matchers: 'rule="MCP-DRIFT-SCHEMA",severity="ERROR"',
    },
    surfaceBreaking: {
      alert: 'MCPSurfaceBreakingDrift',
      record: 'driftd:surface_breaking:active',
      matchers: 'rule=~"MCP-DRIFT-(PROMPT-MISSING|PROMPT-ARGUMENT|RESOURCE-MISSING|RESOURCE-TEMPLATE-MISSING|URI-TEMPLATE)",severity="ERROR"',
    },
  },

  prometheusRules+:: {
    local cfg = $._config,
    local m(name, matchers='') = lib.metric(cfg, name, matchers),
    local pages = [$._pageFindings[k] for k in ['toolMissing', 'schemaBreaking', 'surfaceBreaking']],
    // f applied to each page's matchers, joined by `or`.
    local union(f) = std.join('\nor\n', [f(p.matchers) for p in pages]) + '\n',
    local targetLabels = ['kind', 'rule', 'severity', 'tool'],
    // indent indents each line of text by two spaces.
    local indent(text) = std.join('', ['  ' + l + '\n' for l in std.split(std.rstripChars(text, '\n'), '\n')]),

    groups+: [{
      comment:: |||
        Recording rules: the breaking findings the page alerts (group driftd)
        read, each step its own series. Evaluated before the alerts in the
        promtool tests (group_eval_order); in Prometheus the groups run side
        by side, so an alert reads these as of their latest evaluation, at
        most one evaluation interval old, well inside every `for:`.
      |||,
      name: 'driftd.rules',
      rules: [
        {
          comment:: |||
            When each breaking per-tool finding (driftd_finding, one series
            per tool, prompt, resource or template) was last scraped. Read
            over %s by driftd:finding_breaking:held.
          ||| % cfg.findingHoldWindow,
          record: 'driftd:finding_breaking:timestamp',
          expr: union(function(s) 'timestamp(%s)' % m('driftd_finding', s)),
        },
        {
          comment:: |||
            The breaking per-tool findings exported in the last %s. A series
            outlives its last sample by %s, so a gap in the scrapes (a
            failed scrape marks every series stale; a replaced pod) does not
            end a page; a resolved finding's page ends %s later. driftd
            publishes the run saved before a restart at start
            (driftd_target_restored), so a restart leaves no gap of its own.
          ||| % [cfg.findingGapWindow, cfg.findingGapWindow, cfg.findingGapWindow],
          record: 'driftd:finding_breaking:exported',
          expr: union(function(s) 'last_over_time(%s[%s])' % [m('driftd_finding', s), cfg.findingGapWindow]),
        },
        {
          comment:: |||
            Breaking findings of a rule on a target that exports no per-tool
            series of that rule (per_tool_series_limit 0, or the cap was
            reached before this rule): the count, once per target and rule,
            so that the page still fires, without a tool label.
          |||,
          record: 'driftd:findings_breaking:untooled',
          expr: '(\n%s)\n> 0\nunless ignoring(kind, tool)\n%s\n' % [
            indent(union(function(s) 'last_over_time(%s[%s])' % [m('driftd_findings', s), cfg.findingGapWindow])),
            m('driftd:finding_breaking:exported'),
          ],
        },
        {
          comment:: |||
            Breaking per-tool findings held while their target's runs fail:
            a series last scraped after the target's last successful run
            (driftd_probe_last_success_timestamp_seconds), on a target whose
            last run failed, for up to %s. driftd itself keeps a finding
            active, and on /metrics, through failed runs (only a successful
            run resolves it: docs/metrics.md), so an outage neither resolves
            nor re-pages; this covers longer gaps: scrapes lost for a while,
            or a restart on a state file from a release that saved no run. A
            finding a successful run resolved is older than that run and is
            not held.
          ||| % cfg.findingHoldWindow,
          record: 'driftd:finding_breaking:held',
          expr: |||
            max_over_time(%(ts)s[%(hold)s])
            > ignoring(%(ign)s) group_left()
            %(lastSuccess)s
            and ignoring(%(ign)s)
            %(success)s == 0
          ||| % {
            ts: m('driftd:finding_breaking:timestamp'),
            hold: cfg.findingHoldWindow,
            ign: std.join(', ', targetLabels),
            lastSuccess: m('driftd_probe_last_success_timestamp_seconds'),
            success: m('driftd_probe_success'),
          },
        },
      ] + [
        {
          comment:: |||
            What %s pages on: its findings exported in the last
            %s, or the count of a target with no per-tool series, or a
            finding held while the target's runs fail.
          ||| % [p.alert, cfg.findingGapWindow],
          record: p.record,
          expr: |||
            %s
            or
            %s
            or
            %s
          ||| % [
            m('driftd:finding_breaking:exported', p.matchers),
            m('driftd:findings_breaking:untooled', p.matchers),
            m('driftd:finding_breaking:held', p.matchers),
          ],
        }
        for p in pages
      ],
    }],
  },
}
