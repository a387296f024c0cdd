package defaultpreemption

import "github.com/prometheus/client_golang/prometheus"

// Metrics are kube-scheduler's preemption metrics, under its names.
type Metrics struct {
	Attempts prometheus.Counter
	Victims  prometheus.Histogram
}

// NewMetrics returns unregistered metrics.
func NewMetrics() *Metrics {
	return &Metrics{
		Attempts: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "scheduler", Name: "preemption_attempts_total",
			Help: "Total preemption attempts in the cluster till now",
		}),
		Victims: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "preemption_victims",
			Help: "Number of selected preemption victims for preemption initiated by a single pod",
			// kube's: 64 or more victims is rare enough for one bucket.
			Buckets: prometheus.ExponentialBuckets(1, 2, 7),
		}),
	}
}

// Collectors lists the metrics for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Attempts, m.Victims}
}
