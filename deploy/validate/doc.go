// Package validate checks driftd's shipped deployment artefacts offline:
// the kustomize base and overlays under deploy/kubernetes (built with the
// kustomize API) and the Helm chart under deploy/helm (rendered and linted
// with the helm library) for its default values and each variant in its
// ci/, every object strict-decoded into its Kubernetes and
// prometheus-operator type and held to the same checks; the alert rules,
// PrometheusRule and Grafana dashboard against the monitoring mixin in
// deploy/mixin that generates them (package generate, `make mixin`), and
// their PromQL; the Dockerfile.
//
// It is its own module so that the main module does not carry the
// Kubernetes, Prometheus, Helm and jsonnet libraries. Run it with
// `make deploy-check` or `cd deploy/validate && go test ./...`.
package validate
