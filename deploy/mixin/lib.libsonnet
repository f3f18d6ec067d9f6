// Helpers shared by the alerts and the dashboard.
{
  // metric selects name with the configured jobSelector and
  // driftdSelector and the given matchers, joined by sep: name alone when
  // all are empty.
  metric(cfg, name, matchers='', sep=','):: (
    local all = std.filter(function(m) m != '', [cfg.jobSelector, cfg.driftdSelector, matchers]);
    if std.length(all) == 0 then name else name + '{' + std.join(sep, all) + '}'
  ),

  // on is the label list of a one-to-one join on a target's (or an
  // instance's) identity: the cluster label first, so that two clusters'
  // driftd with the same job and instance never match.
  on(cfg, labels):: 'on(%s)' % std.join(', ', [cfg.clusterLabel] + labels),

  // fold joins the lines of a text block with spaces, as a YAML folded
  // scalar (>-) reads them: the source stays wrapped, the value one line.
  fold(text):: std.join(' ', std.split(std.rstripChars(text, '\n'), '\n')),

  // humanize turns a Prometheus duration of one unit ('15m', '1h') into
  // words for an annotation ('15 minutes', '1 hour').
  humanize(d):: (
    local units = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week' };
    local n = std.substr(d, 0, std.length(d) - 1);
    local u = units[d[std.length(d) - 1]];
    n + ' ' + u + (if n == '1' then '' else 's')
  ),

  // number spells out small counts, as prose does.
  number(n):: (
    local words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
    if n >= 0 && n < std.length(words) then words[n] else std.toString(n)
  ),
}
