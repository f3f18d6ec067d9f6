// Package validate checks driftd's shipped deployment artefacts offline:
// the kustomize base and overlays under deploy/kubernetes (built with the
// kustomize API and strict-decoded into their Kubernetes and
// prometheus-operator types), the PrometheusRule against
// deploy/prometheus/alerts.yml, and the Grafana dashboard's PromQL.
//
// It is its own module so that the main module does not carry the
// Kubernetes and Prometheus APIs. Run it with `make deploy-check` or
// `cd deploy/validate && go test ./...`.
package validate
