package workqueue

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const subsystem = "workqueue"

var (
	depthVec = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem, Name: "depth", Help: "Current depth of workqueue",
	}, []string{"name"})
	addsVec = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "adds_total", Help: "Total number of adds handled by workqueue",
	}, []string{"name"})
	latencyVec = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "queue_duration_seconds",
		Help:    "How long in seconds an item stays in workqueue before being requested.",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
	}, []string{"name"})
	workVec = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "work_duration_seconds",
		Help:    "How long in seconds processing an item from workqueue takes.",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
	}, []string{"name"})
	retriesVec = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "retries_total", Help: "Total number of retries handled by workqueue",
	}, []string{"name"})
	unfinishedDesc = prometheus.NewDesc(subsystem+"_unfinished_work_seconds",
		"How many seconds of work has been done that is in progress and hasn't been observed by work_duration. "+
			"Large values indicate stuck threads.", []string{"name"}, nil)
	longestDesc = prometheus.NewDesc(subsystem+"_longest_running_processor_seconds",
		"How many seconds has the longest running processor for workqueue been running.", []string{"name"}, nil)
)

// inProgress is the set of live named queues, read at scrape time for the
// unfinished-work gauges.
var inProgress = struct {
	sync.Mutex
	queues map[progressReporter]struct{}
}{queues: map[progressReporter]struct{}{}}

type progressReporter interface {
	progress() (name string, unfinished, longest float64)
}

type progressCollector struct{}

func (progressCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- unfinishedDesc
	ch <- longestDesc
}

func (progressCollector) Collect(ch chan<- prometheus.Metric) {
	inProgress.Lock()
	qs := make([]progressReporter, 0, len(inProgress.queues))
	for q := range inProgress.queues {
		qs = append(qs, q)
	}
	inProgress.Unlock()
	// Queues sharing a name are summed (unfinished) or maxed (longest).
	type agg struct{ unfinished, longest float64 }
	byName := map[string]*agg{}
	for _, q := range qs {
		name, u, l := q.progress()
		a := byName[name]
		if a == nil {
			a = &agg{}
			byName[name] = a
		}
		a.unfinished += u
		if l > a.longest {
			a.longest = l
		}
	}
	for name, a := range byName {
		ch <- prometheus.MustNewConstMetric(unfinishedDesc, prometheus.GaugeValue, a.unfinished, name)
		ch <- prometheus.MustNewConstMetric(longestDesc, prometheus.GaugeValue, a.longest, name)
	}
}

// Collectors returns the work queue metrics, for callers that register
// collectors themselves.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{depthVec, addsVec, latencyVec, workVec, retriesVec, progressCollector{}}
}

// RegisterMetrics registers the work queue metrics with reg.
func RegisterMetrics(reg prometheus.Registerer) error {
	for _, c := range Collectors() {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// queueMetrics records one named queue's metrics. A nil *queueMetrics (an
// unnamed queue) records nothing. Its methods are called under the queue's
// lock; mu guards the timestamps, which scrapes read without that lock.
type queueMetrics[K comparable] struct {
	name            string
	depth           prometheus.Gauge
	adds, retries   prometheus.Counter
	latency, work   prometheus.Observer
	addTimes        map[K]time.Time
	processingStart map[K]time.Time

	mu *sync.Mutex
}

func newQueueMetrics[K comparable](name string) *queueMetrics[K] {
	if name == "" {
		return nil
	}
	m := &queueMetrics[K]{
		name:            name,
		depth:           depthVec.WithLabelValues(name),
		adds:            addsVec.WithLabelValues(name),
		retries:         retriesVec.WithLabelValues(name),
		latency:         latencyVec.WithLabelValues(name),
		work:            workVec.WithLabelValues(name),
		addTimes:        map[K]time.Time{},
		processingStart: map[K]time.Time{},
		mu:              &sync.Mutex{},
	}
	inProgress.Lock()
	inProgress.queues[m] = struct{}{}
	inProgress.Unlock()
	return m
}

func (m *queueMetrics[K]) unregister() {
	if m == nil {
		return
	}
	inProgress.Lock()
	delete(inProgress.queues, m)
	inProgress.Unlock()
}

func (m *queueMetrics[K]) add(item K) {
	if m == nil {
		return
	}
	m.adds.Inc()
	m.depth.Inc()
	m.mu.Lock()
	if _, ok := m.addTimes[item]; !ok {
		m.addTimes[item] = time.Now()
	}
	m.mu.Unlock()
}

func (m *queueMetrics[K]) get(item K) {
	if m == nil {
		return
	}
	m.depth.Dec()
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.processingStart[item] = now
	if t, ok := m.addTimes[item]; ok {
		m.latency.Observe(now.Sub(t).Seconds())
		delete(m.addTimes, item)
	}
}

func (m *queueMetrics[K]) done(item K) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.processingStart[item]; ok {
		m.work.Observe(time.Since(t).Seconds())
		delete(m.processingStart, item)
	}
}

func (m *queueMetrics[K]) retry() {
	if m == nil {
		return
	}
	m.retries.Inc()
}

func (m *queueMetrics[K]) progress() (string, float64, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var total, longest float64
	for _, t := range m.processingStart {
		d := now.Sub(t).Seconds()
		total += d
		if d > longest {
			longest = d
		}
	}
	return m.name, total, longest
}
