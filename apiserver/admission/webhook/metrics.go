package webhook

import (
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/api/apierrors"
)

// metrics are kube-apiserver's admission webhook metrics (same names and
// labels).
type metrics struct {
	duration  *prometheus.HistogramVec
	rejection *prometheus.CounterVec
	failOpen  *prometheus.CounterVec
}

func newMetrics() *metrics {
	return &metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_admission_webhook_admission_duration_seconds",
			Help:    "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
			Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25},
		}, []string{"name", "type", "operation", "rejected"}),
		rejection: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_admission_webhook_rejection_count",
			Help: "Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
		}, []string{"name", "type", "operation", "error_type", "rejection_code"}),
		failOpen: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_admission_webhook_fail_open_count",
			Help: "Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).",
		}, []string{"name", "type"}),
	}
}

// observe records one call of h that ended with err (nil, a callError, a
// refusal or an internal error) and whether the request was refused.
func (m *metrics) observe(h *hook, op string, took time.Duration, err error) {
	typ := "validating"
	if h.mutating {
		typ = "admit"
	}
	rejected := false
	var ce *callError
	var se *apierrors.StatusError
	switch {
	case err == nil:
	case errors.As(err, &ce):
		if h.ignoreFailures {
			m.failOpen.WithLabelValues(h.name, typ).Inc()
		} else {
			rejected = true
			m.rejection.WithLabelValues(h.name, typ, op, "calling_webhook_error", "0").Inc()
		}
	case errors.As(err, &se):
		rejected = true
		code := min(int(se.ErrStatus.Code), 600)
		m.rejection.WithLabelValues(h.name, typ, op, "no_error", strconv.Itoa(code)).Inc()
	default:
		rejected = true
		m.rejection.WithLabelValues(h.name, typ, op, "apiserver_internal_error", "0").Inc()
	}
	m.duration.WithLabelValues(h.name, typ, op, strconv.FormatBool(rejected)).Observe(took.Seconds())
}

// Register adds the webhook metrics to reg.
func (m *Mutating) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.d.metrics.duration, m.d.metrics.rejection, m.d.metrics.failOpen} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
