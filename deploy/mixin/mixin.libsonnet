// driftd's monitoring mixin: alerts, recording rules (none yet) and the
// Grafana dashboard, configured by _config (config.libsonnet). The shipped
// deploy/prometheus/alerts.yml and deploy/grafana/driftd.json are generated
// from it with the defaults (`make mixin`); deploy/validate fails while they
// differ from what it generates.
(import 'config.libsonnet') +
(import 'alerts.libsonnet') +
(import 'dashboard.libsonnet') +
{
  // driftd needs no recording rules: every alert and panel reads its
  // series directly.
  prometheusRules+:: { groups+: [] },
}
