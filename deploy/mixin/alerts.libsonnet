// The alert rules. Each rule's `comment::` (hidden, so no consumer of the
// mixin sees it) is written above it in the generated alerts.yml, and
// prometheusAlerts' own above the whole file. Runbooks: docs/runbooks.md.
local lib = import 'lib.libsonnet';

{
  prometheusAlerts+:: {
    local cfg = $._config,
    local m(name, matchers='') = lib.metric(cfg, name, matchers),
    local runbook(alert) = cfg.runbookURLPattern % std.asciiLower(alert),

    // A page alert's expression: its recording rule (rules.libsonnet).
    local page(p) = m($._pageFindings[p].record),
    local on(labels) = lib.on(cfg, labels),

    comment:: |||
      driftd alert rules. Runbooks: docs/runbooks.md (one section per alert,
      anchor = the alert name in lower case). Tests: alerts_test.yml
      (`promtool test rules deploy/prometheus/alerts_test.yml`).

      Two groups: driftd.rules records the series the page alerts read
      (driftd:tool_missing:active, …; docs/metrics.md, Recording rules), and
      driftd holds the alerts. Load both: without the recording rules the
      page alerts never fire.

      Severity scheme (the `severity` label, for Alertmanager routing):
        critical  page someone now: agents calling the server are breaking
        warning   a ticket or a chat message for working hours
        info      for the record: dashboards, a low-traffic channel
      driftd's own grade of a finding (ERROR/WARN/INFO) is the `severity` label of
      the driftd_* series; the alert's `severity` label replaces it, so alerts
      built on findings carry it on as `finding_severity`. (Annotations and
      templated labels see the series' labels, so `{{ $labels.severity }}` in
      them is driftd's grade, not the alert's.)

      `for:` durations assume the usual production schedule of about @every 5m:
      a finding's gauge only changes when a run ends, so `for: 10m` means "still
      there after two or three runs" (deploy/mixin's _config sets them). The
      end-to-end test (deploy/e2e/run.sh) runs a copy of this file with every
      `for:` shortened; the values here are the ones to ship.

      Expressions never assume a series exists: findings series exist only
      while a finding is active, driftd_target_info and the probe gauges only
      after a target's first run (or from start, restored from its state
      file), and the finding counters only after the first finding of their
      rule opened.
    |||,

    groups+: [{
      name: 'driftd',
      rules: [
        {
          comment:: |||
            One alert per missing tool (per prompt, resource or template for
            the surface alert: the kind label), read through the recording
            rules of group driftd.rules: driftd:tool_missing:active is a
            finding exported in the last %(gap)s (a gap in the scrapes, such as
            a restart that spans one, does not end the page; a resolved
            finding's page ends %(gap)s later), or, for a target that exports
            no per-tool series (per_tool_series_limit 0, or the cap reached),
            the count, once per target; or a finding held while the target's
            runs fail, for up to %(hold)s (an outage neither resolves nor
            re-pages).
          ||| % { hold: cfg.findingHoldWindow, gap: cfg.findingGapWindow },
          alert: 'MCPToolMissing',
          expr: page('toolMissing'),
          'for': cfg.findingFor,
          labels: {
            severity: cfg.pageSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: declared tool{{ if $labels.tool }} "{{ $labels.tool }}" is{{ else }}s are{{ end }} not served',
            description: lib.fold(|||
              {{ if $labels.tool }}The tool "{{ $labels.tool }}" is declared in the manifest of
              {{ $labels.target }} but the server no longer lists it.{{ else }}{{ $value }}
              tool(s) declared in the manifest of {{ $labels.target }} are not listed by the
              server (tool names are not exported for this target: see driftd_finding_series_dropped
              and per_tool_series_limit).{{ end }} Agents that call {{ if $labels.tool }}it{{ else }}them{{ end }} get an
              unknown-tool error.
              driftd grades this {{ $labels.severity }} (MCP-DRIFT-TOOL-MISSING).
            |||),
            runbook_url: runbook('MCPToolMissing'),
          },
        },
        {
          comment:: |||
            Breaking schema changes: MCP-DRIFT-SCHEMA findings driftd grades ERROR
            (every breaking BRK-* grade but BRK-UNPROVABLE, which is WARN and
            shows up in DriftdNewFindings; raise it with severity: {BRK-UNPROVABLE:
            ERROR} to page on it). Read through driftd:schema_breaking:active,
            built as MCPToolMissing's.
          |||,
          alert: 'MCPBreakingSchemaDrift',
          expr: page('schemaBreaking'),
          'for': cfg.findingFor,
          labels: {
            severity: cfg.pageSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: breaking schema change{{ if $labels.tool }} in tool "{{ $labels.tool }}"{{ end }}',
            description: lib.fold(|||
              {{ if $labels.tool }}The served schema of "{{ $labels.tool }}" on {{ $labels.target }} differs{{ else }}{{ $value }}
              served schema(s) on {{ $labels.target }} differ{{ end }} from the manifest in a way
              driftd grades breaking ({{ $labels.severity }}): callers built against the manifest are refused
              or get results they cannot read. The report names the pointer, direction and BRK-* grade.
            |||),
            runbook_url: runbook('MCPBreakingSchemaDrift'),
          },
        },
        {
          comment:: |||
            Breaking drift of the rest of the agent-facing surface: a declared prompt,
            resource or resource template not served, a prompt argument change
            graded breaking (a required argument added, an argument removed or made
            required), or a template whose uriTemplate changed. The kind label says
            which list; the tool label names the prompt, resource (by uri) or
            template. Read through driftd:surface_breaking:active, built as
            MCPToolMissing's.
          |||,
          alert: 'MCPSurfaceBreakingDrift',
          expr: page('surfaceBreaking'),
          'for': cfg.findingFor,
          labels: {
            severity: cfg.pageSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: {{ $labels.rule }}{{ if $labels.tool }} on {{ $labels.kind }} "{{ $labels.tool }}"{{ end }}',
            description: lib.fold(|||
              {{ if $labels.tool }}The {{ $labels.kind }} "{{ $labels.tool }}" of {{ $labels.target }} differs{{ else }}{{ $value }}
              prompt(s), resource(s) or template(s) of {{ $labels.target }} differ{{ end }} from the
              manifest in a way that breaks agents built against it ({{ $labels.rule }}, {{ $labels.severity }}):
              a prompt or resource they use is gone, a prompt needs an argument they do not send, or the
              URIs they build from a template no longer match.
            |||),
            runbook_url: runbook('MCPSurfaceBreakingDrift'),
          },
        },
        {
          comment:: |||
            The server refused every protocol revision driftd speaks: nothing was
            compared, so drift on this target is invisible. The run also counts as
            a failure; DriftdProbeFailing leaves this case to this alert.
          |||,
          alert: 'MCPProtocolUnsupported',
          expr: m('driftd_findings', 'rule="MCP-DRIFT-PROTOCOL-UNSUPPORTED"') + ' > 0',
          'for': cfg.protocolUnsupportedFor,
          labels: {
            severity: cfg.ticketSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: the server speaks no protocol revision driftd supports',
            description: lib.fold(|||
              {{ $labels.target }} refused every MCP protocol revision driftd speaks
              (MCP-DRIFT-PROTOCOL-UNSUPPORTED, {{ $labels.severity }}). No tools were listed or
              compared: drift on this target goes unseen until this is fixed.
            |||),
            runbook_url: runbook('MCPProtocolUnsupported'),
          },
        },
        {
          comment:: |||
            A different tool set on a second connection. Briefly normal while a
            rolling deploy has old and new replicas behind one address, hence the
            long `for:`.
          |||,
          alert: 'MCPToolSetVariesPerConnection',
          expr: m('driftd_findings', 'rule="MCP-CONF-TOOLSET-VARIES"') + ' > 0',
          'for': cfg.toolSetVariesFor,
          labels: {
            severity: cfg.ticketSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: the tool set differs between connections',
            description: lib.fold(|||
              Two connections to {{ $labels.target }} listed different tool sets
              (MCP-CONF-TOOLSET-VARIES, {{ $labels.severity }}); the MCP specification says the list
              must not vary per connection. Usually replicas running different versions behind one
              address; agents see tools appear and disappear.
            |||),
            runbook_url: runbook('MCPToolSetVariesPerConnection'),
          },
        },
        {
          comment:: |||
            tools/list answered without credentials on a production target.
            driftd grades MCP-AUTH-ANONYMOUS-LIST ERROR only for production; the
            join keeps a severity override on another class from raising it here.
          |||,
          alert: 'MCPAnonymousAccessProduction',
          expr: |||
            %s > 0
            and %s
            %s
          ||| % [
            m('driftd_findings', 'rule="MCP-AUTH-ANONYMOUS-LIST",severity="ERROR"'),
            on(['job', 'instance', 'target']),
            m('driftd_target_info', 'classification="production"'),
          ],
          'for': cfg.anonymousAccessFor,
          labels: {
            severity: cfg.ticketSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: production MCP server lists its tools without credentials',
            description: lib.fold(|||
              The production target {{ $labels.target }} answered tools/list to a request without
              credentials (MCP-AUTH-ANONYMOUS-LIST, {{ $labels.severity }}). Anyone who can reach it
              can enumerate its tools, and possibly call them.
            |||),
            runbook_url: runbook('MCPAnonymousAccessProduction'),
          },
        },
        {
          comment:: |||
            A served text carries what the MCP-SEC rules grade ERROR by default:
            Unicode tag characters, terminal escapes, or a tool name that folds
            onto another's. WARN and INFO posture findings (instruction phrasing,
            URLs) are for the dashboard and DriftdNewFindings, not for a ticket.
          |||,
          alert: 'MCPToolPoisoningSuspected',
          expr: m('driftd_findings', 'rule=~"MCP-SEC-.*",severity="ERROR"') + ' > 0',
          'for': cfg.poisoningFor,
          labels: {
            severity: cfg.ticketSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: served tool text hides content from people ({{ $labels.rule }})',
            description: lib.fold(|||
              {{ $labels.target }} serves {{ $value }} text(s) that {{ $labels.rule }} grades ERROR:
              characters a person does not see but a model reads, terminal escapes, or a tool
              name that reads as another's. This is how tool poisoning arrives; treat it as a
              security finding until the server's owner explains it.
            |||),
            runbook_url: runbook('MCPToolPoisoningSuspected'),
          },
        },
        {
          comment:: |||
            The last run could not list and compare the tools. Each failed run
            holds the gauge at 0 until the next, so `for: 15m` is three failed
            runs at @every 5m. Protocol refusals and expired logins have their
            own alerts (MCPProtocolUnsupported, DriftdLoginExpired), so a
            target pages once, with the alert that says what to do.
          |||,
          alert: 'DriftdProbeFailing',
          expr: |||
            %s == 0
            unless ignoring(rule, severity)
            %s
            unless %s
            %s == 1
          ||| % [
            m('driftd_probe_success'),
            m('driftd_findings', 'rule="MCP-DRIFT-PROTOCOL-UNSUPPORTED"'),
            on(['job', 'instance', 'target']),
            m('driftd_oauth_login_required'),
          ],
          'for': cfg.probeFailingFor,
          labels: {
            severity: cfg.ticketSeverity,
          },
          annotations: {
            summary: 'driftd cannot probe {{ $labels.target }}',
            description: lib.fold(|||
              The runs of {{ $labels.target }} have failed for at least %s: driftd cannot
              list and compare its tools, so drift goes unseen. The reason is in
              driftd_probe_failures_total{target="{{ $labels.target }}"} and the target's report.
            ||| % lib.humanize(cfg.probeFailingFor)),
            runbook_url: runbook('DriftdProbeFailing'),
          },
        },
        {
          comment:: |||
            A target logged into with `driftd auth login` (its oauth block has
            `login:`) could not get a token from its session: the refresh token
            expired or was revoked, the server moved to another authorization
            server, or there is no session. Its runs fail as auth_required until
            an operator logs in again; DriftdProbeFailing leaves this case to
            this alert. One refused refresh is definitive, hence the short
            `for:`; the gauge only changes when a run ends, so it does not flap.
          |||,
          alert: 'DriftdLoginExpired',
          expr: m('driftd_oauth_login_required') + ' == 1',
          'for': cfg.loginExpiredFor,
          labels: {
            severity: cfg.ticketSeverity,
          },
          annotations: {
            summary: '{{ $labels.target }}: login expired, run `driftd auth login {{ $labels.target }}`',
            description: lib.fold(|||
              driftd could not get a token for {{ $labels.target }} from its login session (refresh
              token expired or revoked, the server moved to another authorization server, or no
              session at all), so its runs fail as auth_required and drift on it goes unseen. Log in
              again with `driftd auth login {{ $labels.target }}` where the daemon reads the session
              (its state dir's sessions/, or the target's oauth.login.session_file).
            |||),
            runbook_url: runbook('DriftdLoginExpired'),
          },
        },
        {
          comment:: |||
            No run has ended for %s schedule periods: the scheduler is stuck,
            runs hang, or every run is skipped. A target that has not finished
            a run since driftd started (no last-run series yet, or the run saved
            before a restart, driftd_target_restored 1, whose time is older after
            a kill) counts from the last configuration load (driftd's start or
            its last good reload).
          ||| % lib.number(cfg.probeStalePeriods),
          alert: 'DriftdProbeStale',
          expr: |||
            (
              time() - %(lastRun)s
              > %(n)d * %(interval)s
              unless %(restored)s == 1
            )
            or
            (
              time() - %(reload)s
              > ignoring(target) group_right()
              (%(n)d * %(interval)s unless (%(lastRun)s unless %(restored)s == 1))
            )
          ||| % {
            restored: m('driftd_target_restored'),
            lastRun: m('driftd_probe_last_run_timestamp_seconds'),
            interval: m('driftd_probe_interval_seconds'),
            reload: m('driftd_config_last_reload_success_timestamp_seconds'),
            n: cfg.probeStalePeriods,
          },
          'for': cfg.probeStaleFor,
          labels: {
            severity: cfg.ticketSeverity,
          },
          annotations: {
            summary: 'driftd has not probed {{ $labels.target }} for {{ $value | humanizeDuration }}',
            description: lib.fold(|||
              No run of {{ $labels.target }} has ended for {{ $value | humanizeDuration }}, more than
              %s periods of its schedule (a target that never finished a run counts from the last
              configuration load). Its findings and metrics are out of date.
            ||| % lib.number(cfg.probeStalePeriods)),
            runbook_url: runbook('DriftdProbeStale'),
          },
        },
        {
          comment:: |||
            A reload (SIGHUP, POST /-/reload, a config file change) was rejected;
            the previous configuration keeps running.
          |||,
          alert: 'DriftdConfigReloadFailed',
          expr: m('driftd_config_last_reload_successful') + ' == 0',
          'for': cfg.reloadFailedFor,
          labels: {
            severity: cfg.ticketSeverity,
          },
          annotations: {
            summary: 'driftd {{ $labels.instance }}: configuration reload failed',
            description: lib.fold(|||
              The last configuration reload of driftd on {{ $labels.instance }} failed; it keeps
              running the previous configuration, so recent edits (new targets, ignores, severities)
              are not in effect.
            |||),
            runbook_url: runbook('DriftdConfigReloadFailed'),
          },
        },
        {
          comment:: |||
            A discovery source's last refresh failed: it keeps its last good
            set of targets, so servers added or removed since are not followed.
          |||,
          alert: 'DriftdDiscoveryFailing',
          expr: m('driftd_sd_last_refresh_successful') + ' == 0',
          'for': cfg.discoveryFailingFor,
          labels: {
            severity: cfg.ticketSeverity,
          },
          annotations: {
            summary: 'driftd {{ $labels.instance }}: discovery source {{ $labels.source }} is failing',
            description: lib.fold(|||
              The last refresh of the discovery source {{ $labels.source }} on driftd
              {{ $labels.instance }} failed. driftd keeps probing the targets it found last, but
              servers added or removed since then are not followed.
            |||),
            runbook_url: runbook('DriftdDiscoveryFailing'),
          },
        },
        {
          comment:: |||
            A finding opened in the last %s, any rule, any grade. The
            second arm catches a counter series born at its first opening
            (driftd creates the series then, at 1, and increase() cannot see a
            rise from nothing). A target's initial findings (its first runs in
            a new state dir: docs/metrics.md) are not openings: driftd creates
            their counters at 0, which neither arm reads as new, so a first
            start raises no storm of these. A restart on a state dir opens
            nothing: the counters of the new process appear only with a new
            opening, and increase() reads the reset as one. After Prometheus
            has had no data for a while it reports every counter above 0 once.
          ||| % lib.humanize(cfg.newFindingsWindow),
          alert: 'DriftdNewFindings',
          expr: |||
            increase(%(opened)s[%(window)s]) > 0
            or
            (
              %(opened)s > 0
              unless
              %(opened)s offset %(window)s
            )
          ||| % { opened: m('driftd_findings_opened_total'), window: cfg.newFindingsWindow },
          labels: {
            severity: cfg.recordSeverity,
            finding_severity: '{{ $labels.severity }}',
          },
          annotations: {
            summary: '{{ $labels.target }}: new {{ $labels.rule }} finding(s)',
            // Concatenated, not formatted: the text holds a printf verb.
            description: lib.fold(|||
              {{ printf "%.0f" $value }} {{ $labels.rule }} finding(s) graded {{ $labels.severity }}
              opened on {{ $labels.target }} in the last
            |||) + ' ' + lib.humanize(cfg.newFindingsWindow) + '.',
            runbook_url: runbook('DriftdNewFindings'),
          },
        },
        {
          comment:: |||
            More findings with a tool than per_tool_series_limit: the per-tool
            alerts above miss the tools left out.
          |||,
          alert: 'DriftdFindingSeriesDropped',
          expr: m('driftd_finding_series_dropped') + ' > 0',
          'for': cfg.seriesDroppedFor,
          labels: {
            severity: cfg.ticketSeverity,
          },
          annotations: {
            summary: '{{ $labels.target }}: {{ $value }} per-tool finding series dropped',
            description: lib.fold(|||
              {{ $value }} active findings of {{ $labels.target }} that name a tool are not exported
              on driftd_finding (per_tool_series_limit reached), so per-tool alerts such as
              MCPToolMissing do not name them.
            |||),
            runbook_url: runbook('DriftdFindingSeriesDropped'),
          },
        },
        {
          comment:: |||
            Ignore entries that matched nothing on the last run or have expired.
          |||,
          alert: 'DriftdIgnoresStale',
          expr: m('driftd_ignores_stale') + ' > 0',
          'for': cfg.ignoresStaleFor,
          labels: {
            severity: cfg.recordSeverity,
          },
          annotations: {
            summary: '{{ $labels.target }}: stale ignore entries ({{ $value }})',
            description: lib.fold(|||
              {{ $value }} ignore entries of {{ $labels.target }} matched nothing on the last run or
              have expired. An expired entry no longer suppresses anything; one that matches nothing
              is dead configuration.
            |||),
            runbook_url: runbook('DriftdIgnoresStale'),
          },
        },
        {
          comment:: |||
            The per-target state (active findings, history) could not be written.
          |||,
          alert: 'DriftdStateWriteFailing',
          expr: 'increase(%s[%s]) > 0' % [m('driftd_state_write_failures_total'), cfg.stateWriteWindow],
          labels: {
            severity: cfg.ticketSeverity,
          },
          annotations: {
            summary: 'driftd {{ $labels.instance }} cannot write its state',
            description: lib.fold(|||
              driftd on {{ $labels.instance }} failed to write target state in the last %s
              (full disk, read-only volume?). Probing goes on, but after a restart findings would
              open again and history would be lost.
            ||| % lib.humanize(cfg.stateWriteWindow)),
            runbook_url: runbook('DriftdStateWriteFailing'),
          },
        },
      ],
    }],
  },
}
