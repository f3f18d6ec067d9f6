// driftd's monitoring mixin: recording rules, alerts and the Grafana
// dashboard, configured by _config (config.libsonnet). The shipped
// deploy/prometheus/alerts.yml and deploy/grafana/driftd.json are generated
// from it with the defaults (`make mixin`); deploy/validate fails while they
// differ from what it generates.
(import 'config.libsonnet') +
(import 'rules.libsonnet') +
(import 'alerts.libsonnet') +
(import 'dashboard.libsonnet')
