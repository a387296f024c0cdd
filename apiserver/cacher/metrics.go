package cacher

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics of one cacher; every series carries the resource as a constant
// label, so the cachers of all resources register side by side.
type metrics struct {
	eventsReceived      prometheus.Counter
	dispatched          prometheus.Counter
	terminated          prometheus.Counter
	initializations     prometheus.Counter
	fallbackWatches     prometheus.Counter
	consistentFromCache prometheus.Counter
	consistentFallback  prometheus.Counter
	watchers            prometheus.Gauge
	collectors          []prometheus.Collector
}

func newMetrics(c *Cacher) *metrics {
	labels := prometheus.Labels{"resource": c.resource}
	counter := func(name, help string, extra prometheus.Labels) prometheus.Counter {
		l := prometheus.Labels{}
		for k, v := range labels {
			l[k] = v
		}
		for k, v := range extra {
			l[k] = v
		}
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: l})
	}
	m := &metrics{
		eventsReceived:  counter("apiserver_watch_cache_events_received_total", "Events received by the watch cache from etcd.", nil),
		dispatched:      counter("apiserver_watch_cache_events_dispatched_total", "Events queued to watchers (one per watcher and event).", nil),
		terminated:      counter("apiserver_terminated_watchers_total", "Watchers closed by the watch cache because they did not keep up, or because it restarted.", nil),
		initializations: counter("apiserver_watch_cache_initializations_total", "Times the watch cache listed its resource from etcd.", nil),
		fallbackWatches: counter("apiserver_watch_cache_storage_watches_total", "Watches older than the event buffer served by an etcd watch of their own.", nil),
		consistentFromCache: counter("apiserver_watch_cache_consistent_read_total", "Consistent lists, by whether they fell back to etcd.",
			prometheus.Labels{"fallback": "false"}),
		consistentFallback: counter("apiserver_watch_cache_consistent_read_total", "Consistent lists, by whether they fell back to etcd.",
			prometheus.Labels{"fallback": "true"}),
		watchers: prometheus.NewGauge(prometheus.GaugeOpts{Name: "apiserver_registered_watchers",
			Help: "Watchers currently open on the watch cache.", ConstLabels: labels}),
	}
	bufferEvents := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "apiserver_watch_cache_events",
		Help: "Events currently kept in the watch cache's ring buffer.", ConstLabels: labels},
		func() float64 { c.mu.RLock(); defer c.mu.RUnlock(); return float64(c.events.len()) })
	capacity := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "apiserver_watch_cache_capacity",
		Help: "Current capacity of the watch cache's ring buffer.", ConstLabels: labels},
		func() float64 { c.mu.RLock(); defer c.mu.RUnlock(); return float64(c.events.capacity()) })
	objects := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "apiserver_watch_cache_objects",
		Help: "Objects currently held by the watch cache.", ConstLabels: labels},
		func() float64 { c.mu.RLock(); defer c.mu.RUnlock(); return float64(len(c.objs)) })
	rev := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "apiserver_watch_cache_resource_version",
		Help: "Revision the watch cache reflects.", ConstLabels: labels},
		func() float64 { c.mu.RLock(); defer c.mu.RUnlock(); return float64(c.rev) })
	m.collectors = []prometheus.Collector{m.eventsReceived, m.dispatched, m.terminated, m.initializations,
		m.fallbackWatches, m.consistentFromCache, m.consistentFallback, m.watchers, bufferEvents, capacity, objects, rev}
	return m
}

// Collectors returns the cacher's metrics, for the caller to register.
func (c *Cacher) Collectors() []prometheus.Collector { return c.metrics.collectors }

// Register registers the cacher's metrics with r.
func (c *Cacher) Register(r prometheus.Registerer) error {
	for _, col := range c.metrics.collectors {
		if err := r.Register(col); err != nil {
			return err
		}
	}
	return nil
}
