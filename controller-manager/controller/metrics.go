package controller

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Per-controller sync metrics, labelled controller=NAME; the work queue
// metrics (workqueue_depth{name=NAME}, ...) come from naming the queue.
var (
	syncDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "controller_sync_duration_seconds",
		Help:    "Time taken by one sync of a controller's key.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"controller"})
	syncTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_sync_total",
		Help: "Syncs by controller and result (success, error).",
	}, []string{"controller", "result"})
	syncErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_sync_errors_total",
		Help: "Syncs that returned an error, by controller.",
	}, []string{"controller"})
)

// SyncMetrics records the syncs of one controller.
type SyncMetrics struct {
	duration       prometheus.Observer
	success, error prometheus.Counter
	errors         prometheus.Counter
}

// NewSyncMetrics registers the sync metrics with reg (once per registry;
// nil skips registration) and returns the recorder for controller name.
func NewSyncMetrics(reg prometheus.Registerer, name string) (*SyncMetrics, error) {
	if reg != nil {
		for _, c := range []prometheus.Collector{syncDuration, syncTotal, syncErrors} {
			if err := reg.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					return nil, err
				}
			}
		}
	}
	return &SyncMetrics{
		duration: syncDuration.WithLabelValues(name),
		success:  syncTotal.WithLabelValues(name, "success"),
		error:    syncTotal.WithLabelValues(name, "error"),
		errors:   syncErrors.WithLabelValues(name),
	}, nil
}

// Observe records one sync that started at start and returned err.
func (m *SyncMetrics) Observe(start time.Time, err error) {
	if m == nil {
		return
	}
	m.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		m.error.Inc()
		m.errors.Inc()
		return
	}
	m.success.Inc()
}

// Instrument wraps a sync function so each call is recorded in m; use it
// with RunWorkers: RunWorkers(ctx, q, n, log, Instrument(m, c.sync)).
func Instrument[K comparable](m *SyncMetrics, sync func(context.Context, K) error) func(context.Context, K) error {
	return func(ctx context.Context, key K) error {
		start := time.Now()
		err := sync(ctx, key)
		if ctx.Err() == nil {
			m.Observe(start, err)
		}
		return err
	}
}
