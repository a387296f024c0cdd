package controller

import (
	"context"
	"log/slog"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
)

// LoopConfig is what a controller declares about its work loop; the rest
// (the queue, the workers, the metrics, the wait for the caches and the
// shutdown) is the same for every controller and lives in Loop.
type LoopConfig[K comparable] struct {
	// Queue names the work queue in the workqueue_* metrics. The names are
	// kube-controller-manager's ("endpoint", "ttl_jobs_to_delete", ...),
	// not always the controller's name in --controllers.
	Queue string
	// RateLimiter spaces the retries of a failing key; nil is the
	// workqueue's default controller rate limiter (kube's).
	RateLimiter workqueue.RateLimiter[K]
	// Sync reconciles one key. It reads the informers' caches, treats a
	// missing object as done and returns an error to have the key retried
	// with back-off.
	Sync func(ctx context.Context, key K) error
	// Log is the controller's logger (slog.Default() if nil).
	Log *slog.Logger
	// Metrics records every sync (nil records nothing); SetMetrics sets it
	// later for constructors that are handed their metrics separately.
	Metrics *SyncMetrics
	// Started, when set, is logged once the caches have synced and the
	// workers start ("deployment controller started").
	Started string
}

// Loop is the half of a controller that every controller shares, written
// once in sample-controller's shape: event handlers only add keys to Queue,
// Run waits for the informers the controller watches, then workers take
// keys one at a time, call Sync, forget a key that synced and re-add one
// that failed rate-limited. Run returns when its context ends, after the
// queue is shut down and every worker has returned.
//
// A controller builds one Loop in its constructor, registers its event
// handlers with Watch (or WaitFor for caches it only reads) and is started
// through Run, which satisfies Interface.
type Loop[K comparable] struct {
	// Queue holds the keys waiting for a sync. Handlers add to it (Add,
	// AddAfter); only the workers take from it.
	Queue   *workqueue.RateLimitingQueue[K]
	cfg     LoopConfig[K]
	waitFor []informer.Syncer
}

var _ Interface = (*Loop[string])(nil)

// NewLoop builds a controller's loop; nothing runs until Run.
func NewLoop[K comparable](cfg LoopConfig[K]) *Loop[K] {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	var opts []workqueue.Option
	if cfg.Queue != "" {
		opts = append(opts, workqueue.WithName(cfg.Queue))
	}
	return &Loop[K]{Queue: workqueue.NewRateLimiting(cfg.RateLimiter, opts...), cfg: cfg}
}

// SetMetrics makes every sync recorded in m; call it before Run.
func (l *Loop[K]) SetMetrics(m *SyncMetrics) { l.cfg.Metrics = m }

// Watch adds h to inf's handlers and makes Run wait for inf's cache.
func Watch[T any, K comparable](l *Loop[K], inf *informer.Informer[T], h informer.Handler[T]) {
	inf.AddEventHandler(h)
	l.WaitFor(inf)
}

// WaitFor makes Run wait for caches the controller reads without
// handling their events; call it before Run. Caches are compared as
// interface values, so they must be pointers (informers are).
func (l *Loop[K]) WaitFor(caches ...informer.Syncer) {
	for _, c := range caches {
		if !containsSyncer(l.waitFor, c) {
			l.waitFor = append(l.waitFor, c)
		}
	}
}

func containsSyncer(list []informer.Syncer, s informer.Syncer) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WaitForCaches waits until every cache the controller watches has synced;
// false means ctx ended first. Run calls it; controllers with their own Run
// (other loops beside the workers) call it before starting them.
func (l *Loop[K]) WaitForCaches(ctx context.Context) bool {
	return informer.WaitForCacheSync(ctx, l.waitFor...)
}

// Run implements Interface: it waits for the caches, then runs workers
// until ctx ends.
func (l *Loop[K]) Run(ctx context.Context, workers int) error {
	if !l.WaitForCaches(ctx) {
		l.Queue.ShutDown() // stopped before the caches synced
		return nil
	}
	if l.cfg.Started != "" {
		l.cfg.Log.Info(l.cfg.Started, "workers", workers)
	}
	l.RunWorkers(ctx, workers)
	return nil
}

// RunWorkers runs the workers alone (no wait for the caches) until ctx
// ends, for controllers whose Run does more than Loop.Run.
func (l *Loop[K]) RunWorkers(ctx context.Context, workers int) {
	RunWorkers(ctx, l.Queue, workers, l.cfg.Log, Instrument(l.cfg.Metrics, l.cfg.Sync))
}

// Add queues key for a sync.
func (l *Loop[K]) Add(key K) { l.Queue.Add(key) }

// The handlers below are the event-to-key mappings most controllers need;
// a controller whose mapping is its own writes an informer.Handler.

// OnChange calls f with the object's current state on every add, update
// and delete: the controller syncs the object itself whatever happened.
func OnChange[T any](f func(*T)) informer.Handler[T] {
	return informer.Handler[T]{
		OnAdd:    func(obj *T, _ bool) { f(obj) },
		OnUpdate: func(_, obj *T) { f(obj) },
		OnDelete: func(obj *T, _ bool) { f(obj) },
	}
}

// Key is the namespace/name key (name alone for a cluster-scoped object)
// most controllers queue.
func Key[T any, PT interface {
	*T
	api.Object
}](obj *T) string {
	return cache.MetaNamespaceKeyFunc(PT(obj))
}

// QueueKeys queues the namespace/name key of the object on every add,
// update and delete.
func QueueKeys[T any, PT interface {
	*T
	api.Object
}](l *Loop[string]) informer.Handler[T] {
	return OnChange(func(obj *T) { l.Add(Key[T, PT](obj)) })
}
