package web

import (
	"html/template"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/state"
)

var funcs = template.FuncMap{
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return time.Since(t).Round(time.Second).String() + " ago"
	},
	"in": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		d := time.Until(*t).Round(time.Second)
		if d < 0 {
			return "due"
		}
		return "in " + d.String()
	},
	"ts":      func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"sev":     func(s catalogue.Severity) string { return string(s) },
	"count": func(m map[catalogue.Severity]int, s string) int {
		return m[catalogue.Severity(s)]
	},
}

var layout = `{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
{{with .Refresh}}<meta http-equiv="refresh" content="{{.}}">{{end}}<title>{{.Title}} · driftd</title><link rel="icon" href="{{.Prefix}}/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="{{.Prefix}}/style.css"><script src="{{.Prefix}}/app.js" defer></script></head><body>
<header><a class="brand" href="{{.Prefix}}/">driftd</a> <nav><a href="{{.Prefix}}/">Targets</a> <a href="{{.Prefix}}/metrics">Metrics</a> <a href="{{.Prefix}}/config">Config</a> <a href="{{.Prefix}}/rules">Rules</a></nav><span class="ver">{{.Version}}</span></header><main>
{{if .Config.Failed}}<div class="banner" role="alert"><strong>configuration reload failed</strong> at {{ts .Config.ReloadFailedAt}} ({{ago .Config.ReloadFailedAt}}): the previous configuration keeps running, each target on its last good manifest, until a reload succeeds.
<ul class="problems">{{range .Config.ReloadProblems}}<li><code>{{.}}</code></li>{{end}}</ul></div>{{end}}{{end}}
{{define "foot"}}</main></body></html>{{end}}
{{define "health"}}{{if eq .Health "up"}}<span class="badge ok">up</span>{{else if eq .Health "failing"}}<span class="badge err" title="{{.Message}}">failing{{with .Reason}}: {{.}}{{end}}</span>{{with .FailingSince}} <span class="dim">since {{ago .}}</span>{{end}}{{else}}<span class="badge">pending</span>{{end}}{{end}}
{{define "drift"}}{{if eq .Drift "drifted"}}<span class="badge s-{{sev .Worst}}">drifted · {{.Worst}}</span>{{with .DriftedSince}} <span class="dim">since {{ago .}}</span>{{end}}{{if .Stale}} <span class="badge stale" title="the last run failed: findings as of the last run that compared">stale</span>{{end}}{{else if eq .Drift "clean"}}<span class="badge ok">clean</span>{{else}}<span class="badge">unknown</span>{{end}}{{end}}`

// The pages are parsed on first use, not at start: every driftd process
// links them, and a one-shot `driftd check` must not pay for them.
var indexTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("index").Funcs(funcs).Parse(layout + `{{template "head" .}}
<h1>Targets <small>{{.Fleet.Total}}</small></h1>
<p class="summary" id="summary">{{range $i, $s := .Fleet.Summary}}{{if $i}}, {{end}}<a class="st-{{$s.State}}" href="{{$s.Href}}">{{$s.Count}} {{$s.State}}</a>{{end}} of {{.Fleet.Total}}{{if .Fleet.Filtered}} · <strong>showing {{.Fleet.Shown}}</strong> <a href="{{.Prefix}}/">clear filters</a>{{end}}
<span class="asof">as of <time datetime="{{rfc3339 .Fleet.AsOf}}">{{ts .Fleet.AsOf}}</time>{{with .Fleet.Refresh}} · refreshes every {{.}}{{end}}</span></p>
{{if .Lifecycle}}<p class="actions"><button type="button" data-post="{{.Prefix}}/-/reload">Reload configuration</button><span class="act-result" role="status"></span></p>{{end}}
{{if .Fleet.Total}}<form class="filters" method="get" action="{{.Prefix}}/" data-autosubmit>
<fieldset><legend>State</legend>{{range .Fleet.States}}<label><input type="checkbox" name="state" value="{{.Value}}"{{if .Selected}} checked{{end}}> {{.Label}}</label> {{end}}</fieldset>
<label>Severity <select name="severity">{{range .Fleet.Severities}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></label>
{{range .Fleet.Labels}}<label>{{.Key}} <select name="label" data-label="{{.Key}}">{{range .Options}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></label>
{{end}}<label>Sort <select name="sort">{{range .Fleet.Sorts}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></label>
<label>Refresh <select name="refresh">{{range .Fleet.Refreshes}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></label>
<button type="submit">Apply</button></form>
{{with .Fleet.Ignored}}<p class="dim">Not understood, ignored: {{range .}}<code>{{.}}</code> {{end}}</p>{{end}}{{end}}
{{if not .Fleet.Total}}<p class="empty">No targets configured.</p>{{else if not .Targets}}<p class="empty">No target matches these filters. <a href="{{.Prefix}}/">Clear filters</a></p>{{else}}
<table id="targets"><thead><tr><th>Target</th><th>Class</th><th>Probe</th><th>Drift</th><th>Last run</th><th>Next run</th><th>Schedule</th><th class="n">Error</th><th class="n">Warn</th><th class="n">Info</th></tr></thead><tbody>
{{range .Targets}}<tr data-target="{{.Name}}">
<td><a href="{{$.Prefix}}/targets/{{.Name}}">{{.Name}}</a>{{range $k, $v := .Labels}} <span class="label">{{$k}}={{$v}}</span>{{end}}{{if .ManifestError}} <span class="badge err" title="{{.ManifestError}}">manifest broken</span>{{end}}<div class="url">{{.URL}}{{if and .Origin (ne .Origin "config")}} · <span class="dim">from {{.Origin}}</span>{{end}}</div></td>
<td>{{.Classification}}</td>
<td>{{if .Running}}<span class="badge run">running</span> {{end}}{{template "health" .Status}}</td>
<td>{{template "drift" .Status}}</td>
<td>{{with .LastRun}}{{ago .StartedAt}} <span class="dim">({{printf "%.3f" .DurationSeconds}}s)</span>{{else}}never{{end}}</td>
<td>{{in .NextRun}}</td><td><code>{{.Schedule}}</code></td>
<td class="n {{if count .Findings "ERROR"}}err{{end}}{{if .Stale}} stale{{end}}">{{count .Findings "ERROR"}}</td>
<td class="n {{if count .Findings "WARN"}}warn{{end}}{{if .Stale}} stale{{end}}">{{count .Findings "WARN"}}</td>
<td class="n{{if .Stale}} stale{{end}}">{{count .Findings "INFO"}}</td>
</tr>{{end}}</tbody></table>{{end}}
{{with .Rejected}}<h2>Discovered, not probed <small>{{len .}}</small></h2>
<table><thead><tr><th>Source</th><th>Why</th></tr></thead><tbody>
{{range .}}<tr><td><code>{{.Source}}</code></td><td>{{.Reason}}</td></tr>{{end}}</tbody></table>{{end}}
{{template "foot" .}}`))
})

var targetTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("target").Funcs(funcs).Parse(layout + `{{template "head" .}}
<h1>{{.Status.Name}}</h1>
{{if .Lifecycle}}<p class="actions"><button type="button" data-post="{{.Prefix}}/api/v1/targets/{{.Status.Name}}/probe">Run now</button><span class="act-result" role="status"></span></p>{{end}}
<p class="url">{{.Status.URL}}{{with .Status.Origin}} · from {{.}}{{end}} · <code>{{.Status.Schedule}}</code> · next {{in .Status.NextRun}}{{if .Status.Running}} · <span class="badge run">running</span>{{end}}</p>
<p class="status">Probe {{template "health" .Status.Status}} · Drift {{template "drift" .Status.Status}}{{with .Status.LastCompared}} · <span class="dim">last compared {{ts .}}</span>{{end}}</p>
{{with .Status.ManifestError}}<div class="banner" role="alert"><strong>The manifest cannot be read</strong>: {{.}}.
Runs compare against its last good version, read before it broke, until the file is fixed.</div>{{end}}
{{if eq .Status.Health "failing"}}<div class="banner" role="alert"><strong>The last run failed{{with .Status.Reason}} ({{.}}){{end}}</strong>{{with .Status.Message}}: {{.}}{{end}}.
{{with .Status.FailingSince}}Failing since {{ts .}} ({{ago .}}).{{end}}
{{if .Findings}}The findings below could not be re-checked: they are as of the last run that compared{{with .Status.LastCompared}}, {{ts .}}{{end}}.{{end}}</div>{{end}}
{{with .Status.Baseline}}{{with .NeedsReview}}<div class="banner" role="alert"><strong>The baseline needs review</strong>: {{.}}.
Nothing is compared and no baseline is recorded from what the server serves until one is accepted (<code>driftd baseline accept {{$.Status.Name}} --digest …</code>).</div>{{end}}
<h2>Baseline</h2>
<section class="facts"><dl>
<dt>Served surface</dt><dd>{{with .ServedDigest}}<code>{{.}}</code> <span class="dim">(the last successful run's; an accept names it)</span>{{else}}no successful run yet{{end}}</dd>
<dt>Baseline</dt><dd>{{with .Digest}}<code>{{.}}</code> {{end}}{{with .Origin}}{{.}}{{end}}{{with .RecordedAt}} at {{ts .}}{{else}}none recorded{{end}}</dd>
{{with .PendingAccept}}<dt>Pending accept</dt><dd><code>{{.Digest}}</code> by {{.By}}{{with .ClaimedBy}} <span class="dim">(claimed: {{.}})</span>{{end}}, requested {{ts .RequestedAt}}; applied by the next successful run that serves it, expires {{ts .Expires}}</dd>{{end}}
</dl></section>{{end}}
<h2>Active findings <small>{{len .Findings}}</small></h2>
{{if not .Findings}}<p class="empty">{{if eq .Status.Drift "unknown"}}Nothing compared yet.{{else}}No active findings.{{end}}</p>{{else}}
<table><thead><tr><th>Severity</th><th>Rule</th><th>Tool, prompt or resource</th><th>Where</th><th>Message</th><th>First seen</th><th>Last seen</th></tr></thead><tbody>
{{range .Findings}}<tr class="sev-{{sev .Severity}}{{if .Stale}} stale{{end}}"><td><span class="badge s-{{sev .Severity}}">{{.Severity}}</span>{{if .Stale}} <span class="badge stale">stale</span>{{end}}</td><td><code>{{.Rule}}</code></td><td>{{if .Kind}}<span class="dim">{{.Kind}}</span> {{end}}{{.Tool}}</td>
<td>{{if .Direction}}{{.Direction}} {{end}}<code>{{.Pointer}}</code>{{if .Grade}}<div class="dim">{{.Change}} · {{.Grade}}</div>{{end}}{{if and .Direction .Tool (not .Kind)}}<div><a href="{{$.Prefix}}/targets/{{$.Status.Name}}/schema?tool={{.Tool}}&amp;direction={{.Direction}}&amp;pointer={{.Pointer}}{{with .Change}}&amp;change={{.}}{{end}}">compare side by side</a></div>{{end}}</td><td>{{.Message}}<div class="dim"><code>{{.Fingerprint}}</code></div></td><td>{{ts .FirstSeen}}</td><td>{{with .LastSeen}}{{ts .}}{{else}}—{{end}}</td></tr>{{end}}
</tbody></table>{{end}}
{{with .Report}}
<h2>Last run</h2>
<section class="facts"><dl>
<dt>Started</dt><dd>{{ts .StartedAt}} ({{printf "%.3f" .DurationSeconds}}s) — {{if .Success}}<span class="badge ok">success</span>{{else}}<span class="badge err">{{.FailureReason}}</span> {{.FailureMessage}}{{end}}</dd>
<dt>Classification</dt><dd>{{.Classification.Class}} <span class="dim">({{.Classification.Reason}})</span></dd>
<dt>Era</dt><dd>{{.Era}}, revision {{with .ProtocolRevision.Value}}{{.}}{{else}}not claimed <span class="dim">({{$.Report.ProtocolRevision.Reason}})</span>{{end}}</dd>
<dt>Server</dt><dd>{{with .ServerInfo}}{{.Name}} {{.Version}}{{else}}unidentified{{end}}</dd>
{{with .ComparedAgainst}}<dt>Compared against</dt><dd>{{.}}{{if eq . "baseline"}} <span class="dim">(trust on first use: GET …/baseline downloads it; driftd baseline accept re-baselines)</span>{{end}}</dd>{{end}}
{{if .Success}}<dt>Tools</dt><dd>{{.Tools.Declared}} declared, {{.Tools.Served}} served in {{.Tools.Pages}} page(s); second connection: {{.Tools.SecondConnection}}</dd>
{{with .Prompts}}<dt>Prompts</dt><dd>{{.Declared}} declared, {{.Served}} served in {{.Pages}} page(s); second connection: {{.SecondConnection}}</dd>{{end}}
{{with .Resources}}<dt>Resources</dt><dd>{{.Declared}} declared, {{.Served}} served in {{.Pages}} page(s); second connection: {{.SecondConnection}}</dd>{{end}}
{{with .ResourceTemplates}}<dt>Resource templates</dt><dd>{{.Declared}} declared, {{.Served}} served in {{.Pages}} page(s); second connection: {{.SecondConnection}}</dd>{{end}}
<dt>Anonymous list</dt><dd>{{.AuthPosture.AnonymousList}}{{if .AuthorizationPresented}} <span class="dim">(credentials: {{range .AuthorizationHeaders}}{{.}} {{end}})</span>{{end}}</dd>
{{else}}<dt>Tools</dt><dd>{{.Tools.Declared}} declared; nothing was listed, since the run failed</dd>{{end}}
</dl></section>
{{range .FindingsOmitted}}<p class="dim">{{.Count}} more <code>{{.Rule}}</code> findings are not listed (at most 100 per rule).</p>{{end}}
{{if .Ignored}}<h2>Ignored <small>{{len .Ignored}}</small></h2><table><tbody>
{{range .Ignored}}<tr><td><code>{{.Rule}}</code></td><td>{{if .Kind}}<span class="dim">{{.Kind}}</span> {{end}}{{.Tool}}</td><td><code>{{.Pointer}}</code></td><td>{{.IgnoreReason}}</td></tr>{{end}}</tbody></table>{{if .IgnoredOmitted}}<p class="dim">{{.IgnoredOmitted}} more not listed.</p>{{end}}{{end}}
{{if .StaleIgnores}}<h2>Stale ignores</h2><ul>{{range .StaleIgnores}}<li><code>{{.Rule}} {{.Tool}} {{.Pointer}} {{.Fingerprint}}</code> — {{.Why}} ({{.Reason}})</li>{{end}}</ul>{{end}}
{{else}}<p class="empty">No run has finished since start.</p>{{end}}
<h2>Change timeline</h2>
{{if .HistoryErr}}<p class="empty">The history could not be read: {{.HistoryErr}}</p>{{else if not .History}}<p class="empty">No changes recorded.</p>{{else}}
<ol class="timeline">{{range .History}}<li class="ev-{{.Kind}}"><time>{{ts .Time}}</time> <span class="kind">{{.Kind}}</span> {{if .Rule}}<code>{{.Rule}}</code>{{end}} {{if .Change}}<code>{{.Change}}</code>{{end}} {{if .ItemKind}}<span class="dim">{{.ItemKind}}</span> {{end}}{{.Tool}}{{with .By}} by {{.}}{{end}}{{with .ClaimedBy}} <span class="dim">(claimed: {{.}})</span>{{end}}{{with .Digest}} <code>{{.}}</code>{{end}} {{if .Pointer}}<code>{{.Pointer}}</code>{{end}} <span class="dim">{{.Message}}</span></li>{{end}}</ol>{{end}}
<h2>Recent log</h2>
{{if not .Logs}}<p class="empty">No log lines yet.</p>{{else}}<pre class="log">{{range .Logs}}{{.}}
{{end}}</pre>{{end}}
<p class="dim">{{if .Report}}<a href="{{.Prefix}}/api/v1/targets/{{.Status.Name}}">report JSON</a> · {{end}}<a href="{{.Prefix}}/api/v1/targets/{{.Status.Name}}/history">history JSON</a>{{if .HasServed}} · <a href="{{.Prefix}}/api/v1/targets/{{.Status.Name}}/manifest">served tools as a manifest</a>{{end}}</p>
{{template "foot" .}}`))
})

var rulesTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("rules").Funcs(funcs).Parse(layout + `{{template "head" .}}
<h1>Rules</h1>
<p class="dim">The rule catalogue: each rule's default severity (a target's <code>severity:</code> overrides it) and when it fires. A rule id links to its section of <a href="{{.RulesDoc}}">docs/rules.md</a>; <a href="{{.Prefix}}/api/v1/rules">the catalogue as JSON</a>.</p>
{{range .Rules}}<h2>{{.Family}} <small>{{len .Rules}}</small></h2>
<table class="rules"><thead><tr><th>Rule</th><th>Severity</th><th>Fires when</th></tr></thead><tbody>
{{range .Rules}}<tr id="{{.ID}}"><td><a href="{{.DocURL}}"><code>{{.ID}}</code></a></td><td><span class="badge s-{{sev .Severity}}">{{.Severity}}</span></td><td>{{.Doc}}</td></tr>
{{end}}</tbody></table>{{end}}
<h2>BRK grades <small>{{len .Grades}}</small></h2>
<table class="rules"><thead><tr><th>Grade</th><th>Severity</th><th>Meaning</th></tr></thead><tbody>
{{range .Grades}}<tr><td><code>{{.ID}}</code>{{if .Breaking}} <span class="dim">breaking</span>{{end}}</td><td><span class="badge s-{{sev .Severity}}">{{.Severity}}</span></td><td>{{.Doc}}</td></tr>
{{end}}</tbody></table>
{{template "foot" .}}`))
})

type page struct {
	Title, Version string
	// Prefix is --web.route-prefix without its trailing slash: every
	// link starts with it.
	Prefix   string
	Targets  []TargetStatus
	Rejected []Rejected
	Status   TargetStatus
	Findings []state.Finding
	// HasServed is set when a served set is recorded (its manifest can
	// be downloaded).
	HasServed  bool
	Report     *probe.Report
	History    []state.Event
	HistoryErr error
	Logs       []string
	// Config is the banner every page shows while a reload is refused.
	Config ConfigStatus
	// Lifecycle shows the buttons that POST (--web.enable-lifecycle).
	Lifecycle bool
	// Fleet is the index's summary, filters and stamp.
	Fleet fleetView
	// Refresh reloads the page this often (seconds; 0 never).
	Refresh int
	// Rules, Grades and RulesDoc are the rules page's.
	Rules    []ruleFamily
	Grades   []catalogue.Grade
	RulesDoc string
}

// index is GET /: the fleet at a glance, filtered and ordered as its
// query asks (fleet.go, docs/daemon.md#status-pages).
func (h *handler) index(w http.ResponseWriter, r *http.Request) {
	q := parseFleetQuery(r.URL.Query())
	targets, view := fleet(h.src.Targets(), q, time.Now(), h.prefix())
	render(w, indexTmpl(), page{Title: "Targets", Version: h.opts.Version, Prefix: h.prefix(), Targets: targets, Rejected: h.src.Rejected(),
		Config: h.src.ConfigStatus(), Lifecycle: h.opts.EnableLifecycle, Fleet: view, Refresh: int(q.Refresh / time.Second)})
}

func (h *handler) targetPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	st, ok := h.src.Target(name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	p := page{Title: name, Version: h.opts.Version, Prefix: h.prefix(), Status: st, Logs: h.src.Logs(name), Config: h.src.ConfigStatus(), Lifecycle: h.opts.EnableLifecycle}
	if run, ok := h.src.Run(name); ok {
		p.Findings, p.HasServed = run.Findings(), !run.State.ServedLastChange.IsZero()
		sortFindings(p.Findings)
		p.Report = run.Report
	}
	// Newest first reads better on a page. A history that cannot be read
	// says so where it would be.
	p.History, p.HistoryErr = h.src.History(name)
	slices.Reverse(p.History)
	render(w, targetTmpl(), p)
}

func render(w http.ResponseWriter, t *template.Template, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := t.Execute(w, p); err != nil {
		http.Error(w, "template: "+err.Error(), http.StatusInternalServerError)
	}
}

const styleCSS = `:root{--fg:#1d2430;--dim:#6b7380;--bg:#fff;--line:#e3e6ea;--err:#c62828;--warn:#b26a00;--ok:#2e7d32;--info:#1565c0}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;gap:1.5em;align-items:center;padding:.6em 1.5em;border-bottom:1px solid var(--line);background:#f7f8fa}
header .brand{font-weight:700;color:var(--fg);text-decoration:none}header nav a{margin-right:1em}header .ver{margin-left:auto;color:var(--dim)}
main{padding:1em 1.5em;max-width:1400px}h1 small,h2 small{color:var(--dim);font-weight:400}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;background:#fafbfc}td.n,th.n{text-align:right}td.err{color:var(--err);font-weight:600}td.warn{color:var(--warn);font-weight:600}
.url,.dim{color:var(--dim)}.url{font-size:12px}code{font:12px ui-monospace,Menlo,Consolas,monospace}
.badge{display:inline-block;padding:0 .45em;border-radius:3px;font-size:12px;background:#eceff1}.badge.ok{background:#e8f5e9;color:var(--ok)}
.badge.err,.badge.s-ERROR{background:#ffebee;color:var(--err)}.badge.s-WARN{background:#fff3e0;color:var(--warn)}.badge.s-INFO{background:#e3f2fd;color:var(--info)}.badge.run{background:#ede7f6}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1.2em}dt{color:var(--dim)}dd{margin:0}
ul.problems{margin:.4em 0 0;padding-left:1.2em}.timeline{list-style:none;padding:0}.timeline li{padding:.25em 0;border-bottom:1px dashed var(--line)}.timeline time{color:var(--dim);font-size:12px;margin-right:.5em}
.banner{border:1px solid #f5c2c7;background:#fff5f5;color:#842029;padding:.7em 1em;border-radius:4px;margin:.5em 0 1em}
.badge.stale{background:#f3e5f5;color:#6a1b9a}tr.stale td,td.stale{opacity:.75}.status{margin:.2em 0 .8em}
table.sbs td{width:50%;padding:0 .4em}table.sbs pre{margin:0;font:12px ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap}
tr.l-changed td{background:#fff8e1}tr.l-declared td:first-child{background:#ffebee}tr.l-served td:last-child{background:#e8f5e9}
.kind{font-weight:600}.ev-opened .kind{color:var(--err)}.ev-resolved .kind{color:var(--ok)}.ev-served_change .kind{color:var(--info)}
.actions{margin:.2em 0 .8em}.summary{margin:.2em 0 .6em}.summary a{font-weight:600}.asof{color:var(--dim);margin-left:1em;font-size:12px}
.st-drifted{color:var(--err)}.st-failing,.st-auth_required{color:var(--warn)}.st-clean{color:var(--ok)}
form.filters{display:flex;flex-wrap:wrap;gap:.4em 1.2em;align-items:center;margin:.3em 0 .6em;padding:.5em .8em;border:1px solid var(--line);border-radius:4px;background:#fafbfc}
form.filters fieldset{border:0;padding:0;margin:0}form.filters legend{float:left;margin-right:.5em;color:var(--dim)}form.filters label{color:var(--dim)}
.label{display:inline-block;font-size:11px;color:var(--dim);border:1px solid var(--line);border-radius:3px;padding:0 .35em}.act-result{color:var(--dim);margin-left:.6em}
pre.log{background:#f7f8fa;border:1px solid var(--line);padding:.8em;overflow:auto;font-size:12px;max-height:30em}.empty{color:var(--dim)}`
