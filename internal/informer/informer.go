package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
)

// ListerWatcher lists and watches one kind. *client.ResourceClient satisfies
// it; For adds fixed selectors.
type ListerWatcher[T any] interface {
	List(ctx context.Context, opts client.ListOptions) (*api.List[T], error)
	Watch(ctx context.Context, opts client.ListOptions) (client.Watcher[T], error)
}

// Handler receives the changes of an informer's cache. Nil fields are
// skipped.
type Handler[T any] struct {
	// OnAdd is called for a new object; isInitialList is true for the
	// objects of the first list (and for the existing objects delivered to a
	// handler added late).
	OnAdd func(obj *T, isInitialList bool)
	// OnUpdate is called when an object changed, when a re-list delivered it
	// again, and at every resync (then old == new).
	OnUpdate func(old, new *T)
	// OnDelete is called with the object's final state. finalStateUnknown
	// is true when the deletion was not seen as a watch event but inferred
	// from the object missing in a re-list: obj is then the last state the
	// informer knew, possibly stale (client-go's DeletedFinalStateUnknown).
	OnDelete func(obj *T, finalStateUnknown bool)
}

// Options configure an informer.
type Options[T any] struct {
	// Resync, when positive, re-delivers every cached object to OnUpdate
	// at this period, so level-based controllers revisit everything.
	Resync time.Duration
	// Indexers are added to the store.
	Indexers cache.Indexers[T]
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Resource names the resource in the lister's NotFound errors. It
	// defaults to the ListerWatcher's GroupResource() when it has one
	// (For's does).
	Resource apierrors.GroupResource
	// Transform, when set, changes each object as it arrives (listed or
	// watched), before the cache keeps it and handlers see it: client-go's
	// SetTransform, with which Kubernetes components drop what they never
	// read (StripManagedFields).
	Transform func(*T)
}

// Back-off and watch timing, as client-go's reflector.
const (
	defaultBackoffInit     = 800 * time.Millisecond
	defaultBackoffMax      = 30 * time.Second
	defaultMinWatchTimeout = 5 * time.Minute
	// A watch that delivered nothing and lasted less than this is treated
	// as a failure.
	shortWatch = time.Second
	// Consistent re-lists are paged.
	listPageSize = 500
)

// Informer is a cache of one kind kept in sync by list and watch.
type Informer[T any] struct {
	lw        ListerWatcher[T]
	store     *cache.Store[T]
	lister    cache.Lister[T]
	resync    time.Duration
	log       *slog.Logger
	transform func(*T)

	// mu serializes store changes with their notification, and handler
	// registration, so every handler sees one consistent sequence.
	mu        sync.Mutex
	listeners []*listener[T]
	runCtx    context.Context // set by Run; nil before
	stopped   bool            // Run is returning: start no more goroutines
	lastRV    string
	needList  bool
	listedYet bool // a list succeeded since Run started
	wg        sync.WaitGroup

	started atomic.Bool
	synced  atomic.Bool

	backoffInit, backoffMax time.Duration
	minWatchTimeout         time.Duration
}

// New returns an informer over lw. Call Run to start it.
func New[T any, PT interface {
	*T
	api.Object
}](lw ListerWatcher[T], opts Options[T]) *Informer[T] {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	gr := opts.Resource
	if gr.Resource == "" {
		if g, ok := lw.(interface {
			GroupResource() apierrors.GroupResource
		}); ok {
			gr = g.GroupResource()
		} else {
			gr = apierrors.GroupResource{Resource: reflect.TypeFor[T]().Name()}
		}
	}
	store := cache.NewStore[T, PT](opts.Indexers)
	return &Informer[T]{
		lw:              lw,
		store:           store,
		lister:          cache.NewLister(store, gr),
		resync:          opts.Resync,
		transform:       opts.Transform,
		log:             log.With("informer", gr.String()),
		needList:        true,
		backoffInit:     defaultBackoffInit,
		backoffMax:      defaultBackoffMax,
		minWatchTimeout: defaultMinWatchTimeout,
	}
}

// Store returns the cache. Its objects are shared: do not modify them.
func (inf *Informer[T]) Store() *cache.Store[T] { return inf.store }

// Lister returns a lister over the cache.
func (inf *Informer[T]) Lister() cache.Lister[T] { return inf.lister }

// AddIndexers adds indexes to the cache (before or after Run).
func (inf *Informer[T]) AddIndexers(indexers cache.Indexers[T]) error {
	return inf.store.AddIndexers(indexers)
}

// HasSynced reports whether the first list has been stored and its
// notifications queued.
func (inf *Informer[T]) HasSynced() bool { return inf.synced.Load() }

// LastSyncResourceVersion returns the resourceVersion the cache reflects.
func (inf *Informer[T]) LastSyncResourceVersion() string {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.lastRV
}

// AddEventHandler registers h. A handler added after the informer started
// first receives OnAdd(obj, true) for every object already cached.
func (inf *Informer[T]) AddEventHandler(h Handler[T]) {
	l := newListener(h)
	inf.mu.Lock()
	defer inf.mu.Unlock()
	inf.listeners = append(inf.listeners, l)
	if inf.runCtx == nil || inf.stopped {
		return // started by Run, or never: Run is over
	}
	for _, obj := range inf.store.List() {
		l.add(notification[T]{kind: addNote, obj: obj, flag: true})
	}
	inf.startListener(l)
}

// startListener runs l until Run's context ends. Callers hold mu.
func (inf *Informer[T]) startListener(l *listener[T]) {
	inf.wg.Add(1)
	go func() {
		defer inf.wg.Done()
		l.run(inf.runCtx)
	}()
}

// Run lists, watches and dispatches until ctx ends, then waits for the
// handlers to return. A second call returns at once.
func (inf *Informer[T]) Run(ctx context.Context) {
	if !inf.started.CompareAndSwap(false, true) {
		inf.log.Warn("informer already started")
		return
	}
	inf.mu.Lock()
	inf.runCtx = ctx
	for _, l := range inf.listeners {
		inf.startListener(l)
	}
	inf.mu.Unlock()
	if inf.resync > 0 {
		inf.wg.Add(1)
		go func() {
			defer inf.wg.Done()
			inf.resyncLoop(ctx)
		}()
	}
	defer func() {
		inf.mu.Lock()
		inf.stopped = true // no wg.Add after this, so Wait is safe
		inf.mu.Unlock()
		inf.wg.Wait()
	}()

	backoff := inf.backoffInit
	for ctx.Err() == nil {
		progress, err := inf.listAndWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			inf.log.Info("list/watch failed", "err", err)
		}
		if progress {
			backoff = inf.backoffInit
			continue
		}
		// Jitter in [d, 2d), as client-go's reflector.
		d := backoff + time.Duration(rand.Int64N(int64(backoff)))
		backoff = min(2*backoff, inf.backoffMax)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// listAndWatch lists if needed, then watches until a watch fails. progress
// reports whether the last watch did useful work, in which case the caller
// retries without back-off.
func (inf *Informer[T]) listAndWatch(ctx context.Context) (progress bool, err error) {
	inf.mu.Lock()
	needList := inf.needList
	inf.mu.Unlock()
	if needList {
		if err := inf.list(ctx); err != nil {
			return false, err
		}
	}
	for {
		inf.mu.Lock()
		rv := inf.lastRV
		inf.mu.Unlock()
		timeout := int64(inf.minWatchTimeout.Seconds() * (1 + rand.Float64()))
		start := time.Now()
		w, err := inf.lw.Watch(ctx, client.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
		if err != nil {
			inf.checkExpired(err)
			return false, fmt.Errorf("watch from resourceVersion %q: %w", rv, err)
		}
		n, err := inf.consume(ctx, w)
		if ctx.Err() != nil {
			return false, nil
		}
		progress = n > 0 || time.Since(start) >= shortWatch
		if err != nil {
			inf.checkExpired(err)
			return progress, fmt.Errorf("watch from resourceVersion %q: %w", rv, err)
		}
		if !progress {
			return false, fmt.Errorf("very short watch from resourceVersion %q: the watch ended after %v without events", rv, time.Since(start).Round(time.Millisecond))
		}
	}
}

// checkExpired schedules a re-list when err says the resourceVersion is gone.
func (inf *Informer[T]) checkExpired(err error) {
	if apierrors.IsGone(err) {
		inf.mu.Lock()
		inf.needList = true
		inf.mu.Unlock()
	}
}

// list fetches the full state and replaces the store with it. The first list
// may be served from the apiserver's cache (resourceVersion "0"); a re-list
// after 410 is a consistent, paged read.
func (inf *Informer[T]) list(ctx context.Context) error {
	inf.mu.Lock()
	first := !inf.listedYet
	inf.mu.Unlock()
	opts := client.ListOptions{}
	if first {
		opts.ResourceVersion = "0"
	} else {
		opts.Limit = listPageSize
	}
	items, rv, err := inf.listAll(ctx, opts)
	if err != nil && opts.Limit > 0 && apierrors.IsGone(err) {
		// The continue token expired between pages: one unpaged list.
		opts.Limit = 0
		items, rv, err = inf.listAll(ctx, opts)
	}
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	inf.replace(items, rv)
	return nil
}

func (inf *Informer[T]) listAll(ctx context.Context, opts client.ListOptions) ([]*T, string, error) {
	var items []*T
	for {
		l, err := inf.lw.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		for i := range l.Items {
			if inf.transform != nil {
				inf.transform(&l.Items[i])
			}
			items = append(items, &l.Items[i])
		}
		if l.Continue == "" || opts.Limit == 0 {
			return items, l.ResourceVersion, nil
		}
		opts.Continue = l.Continue
	}
}

// replace installs a full list and notifies: adds for new objects, updates
// for known ones, and deletes (final state unknown) for vanished ones.
func (inf *Informer[T]) replace(items []*T, rv string) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	old := map[string]*T{}
	for _, o := range inf.store.List() {
		old[inf.store.KeyOf(o)] = o
	}
	inf.store.Replace(items, rv)
	initial := !inf.synced.Load()
	for _, obj := range items {
		key := inf.store.KeyOf(obj)
		if prev, ok := old[key]; ok {
			inf.notify(notification[T]{kind: updateNote, old: prev, obj: obj})
			delete(old, key)
		} else {
			inf.notify(notification[T]{kind: addNote, obj: obj, flag: initial})
		}
	}
	for _, prev := range old {
		inf.notify(notification[T]{kind: deleteNote, obj: prev, flag: true})
	}
	inf.lastRV = rv
	inf.needList = false
	inf.listedYet = true
	inf.synced.Store(true)
}

// consume applies a watch's events until it ends; it returns how many
// objects or bookmarks arrived and, for an ERROR event, the error it carried.
func (inf *Informer[T]) consume(ctx context.Context, w client.Watcher[T]) (int, error) {
	defer w.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return n, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return n, nil
			}
			if ev.Type == api.Error {
				if ev.Status == nil {
					return n, errors.New("watch ERROR event without a status")
				}
				return n, apierrors.FromStatus(*ev.Status)
			}
			n++ // an ERROR is not progress: a watch failing at once must back off
			inf.apply(ev)
		}
	}
}

func (inf *Informer[T]) apply(ev client.Event[T]) {
	if ev.Object == nil {
		return
	}
	if inf.transform != nil && ev.Type != api.Bookmark {
		inf.transform(ev.Object)
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	rv := inf.store.Meta(ev.Object).ResourceVersion
	switch ev.Type {
	case api.Added, api.Modified:
		if prev, ok := inf.store.Get(ev.Object); ok {
			inf.store.Update(ev.Object)
			inf.notify(notification[T]{kind: updateNote, old: prev, obj: ev.Object})
		} else {
			inf.store.Add(ev.Object)
			inf.notify(notification[T]{kind: addNote, obj: ev.Object})
		}
	case api.Deleted:
		inf.store.Delete(ev.Object)
		inf.notify(notification[T]{kind: deleteNote, obj: ev.Object})
	case api.Bookmark:
	default:
		inf.log.Warn("ignoring watch event of unknown type", "type", ev.Type)
		return
	}
	if rv != "" {
		inf.lastRV = rv
		inf.store.SetResourceVersion(rv)
	}
}

// notify queues n for every handler. Callers hold mu.
func (inf *Informer[T]) notify(n notification[T]) {
	for _, l := range inf.listeners {
		l.add(n)
	}
}

func (inf *Informer[T]) resyncLoop(ctx context.Context) {
	t := time.NewTicker(inf.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !inf.synced.Load() {
			continue
		}
		inf.mu.Lock()
		for _, obj := range inf.store.List() {
			inf.notify(notification[T]{kind: updateNote, old: obj, obj: obj})
		}
		inf.mu.Unlock()
	}
}

// Syncer is anything with a HasSynced, such as an Informer.
type Syncer interface {
	HasSynced() bool
}

// WaitForCacheSync waits until every informer has synced; it returns false if
// ctx ended first.
func WaitForCacheSync(ctx context.Context, informers ...Syncer) bool {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		all := true
		for _, i := range informers {
			if !i.HasSynced() {
				all = false
				break
			}
		}
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
