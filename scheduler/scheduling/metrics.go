package scheduling

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/scheduler/plugins/defaultpreemption"
	"github.com/minik8s/minik8s/scheduler/queue"
)

// Attempt results, the "result" label of the attempt metrics.
const (
	ResultScheduled     = "scheduled"
	ResultUnschedulable = "unschedulable"
	ResultError         = "error"
)

// Metrics are the scheduler's Prometheus metrics, under kube-scheduler's
// names.
type Metrics struct {
	ScheduleAttempts   *prometheus.CounterVec
	AttemptDuration    *prometheus.HistogramVec
	E2EDuration        *prometheus.HistogramVec
	PodSchedulingSLI   *prometheus.HistogramVec
	FrameworkExtension *prometheus.HistogramVec
	// Preemption holds scheduler_preemption_attempts_total and
	// scheduler_preemption_victims.
	Preemption *defaultpreemption.Metrics
	pending    []prometheus.Collector
}

// latencyBuckets are kube's: 1 ms doubling to about 16 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2, 15)

// NewMetrics returns the metrics; pending pods are read from q at scrape time.
func NewMetrics(q *queue.PriorityQueue) *Metrics {
	m := &Metrics{
		ScheduleAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "scheduler", Name: "schedule_attempts_total",
			Help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		}, []string{"result", "profile"}),
		AttemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "scheduling_attempt_duration_seconds",
			Help:    "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
			Buckets: latencyBuckets,
		}, []string{"result", "profile"}),
		E2EDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "e2e_scheduling_duration_seconds",
			Help:    "E2e scheduling latency in seconds (scheduling algorithm + binding).",
			Buckets: latencyBuckets,
		}, []string{"result", "profile"}),
		PodSchedulingSLI: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "pod_scheduling_sli_duration_seconds",
			Help:    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue until it is bound; may include multiple attempts.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
		}, []string{"attempts"}),
		FrameworkExtension: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "scheduler", Name: "framework_extension_point_duration_seconds",
			Help:    "Latency for running all plugins of a specific extension point.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
		}, []string{"extension_point", "status", "profile"}),
		Preemption: defaultpreemption.NewMetrics(),
	}
	for _, name := range []string{"active", "backoff", "unschedulable"} {
		m.pending = append(m.pending, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Subsystem: "scheduler", Name: "pending_pods",
			Help:        "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods.",
			ConstLabels: prometheus.Labels{"queue": name},
		}, func() float64 {
			a, b, u := q.Lens()
			switch name {
			case "active":
				return float64(a)
			case "backoff":
				return float64(b)
			}
			return float64(u)
		}))
	}
	return m
}

// Register adds the metrics to reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range append([]prometheus.Collector{m.ScheduleAttempts, m.AttemptDuration, m.E2EDuration, m.PodSchedulingSLI, m.FrameworkExtension}, append(m.Preemption.Collectors(), m.pending...)...) {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
