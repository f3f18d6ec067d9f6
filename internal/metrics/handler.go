package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics from g (the registry New registered into,
// with whatever else the caller registered there) through client_golang's handler: the
// format is negotiated from the Accept header (the text format 0.0.4
// when the client names none it knows, OpenMetrics 1.0 with a _created
// sample for every counter and histogram when it asks for it, as
// Prometheus does by default), and so is gzip. A Gather error is answered
// 500.
func (m *Metrics) Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		EnableOpenMetrics:                   true,
		EnableOpenMetricsTextCreatedSamples: true,
		ErrorHandling:                       promhttp.HTTPErrorOnError,
	})
}
