package cacher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// Defaults of Config.
const (
	DefaultEventBufferSize       = 10000
	DefaultBookmarkInterval      = time.Minute
	DefaultWatcherBufferSize     = 100
	DefaultSlowWatcherTimeout    = 100 * time.Millisecond
	DefaultConsistentReadTimeout = 3 * time.Second
	listPageSize                 = 1000
)

// Config assembles a Cacher.
type Config struct {
	Store *storage.Store
	// Prefix is the resource's key prefix below the store prefix, e.g. "pods/".
	Prefix string
	// Resource labels the cache's metrics and logs (default: Prefix
	// without its slash); caches of one prefix served as two kinds need
	// two names.
	Resource string
	// Decode turns a stored value at a revision into what the cache keeps
	// and serves: the object encoded as JSON with metadata.resourceVersion
	// set to rev, its namespace/name, labels and selectable fields. Decode
	// is also given an Object's own JSON (with another revision) to render
	// a DELETED event of its previous content.
	Decode func(key string, value []byte, rev int64) (*Object, error)
	// Bookmark returns the JSON of an empty object of the kind with only
	// metadata.resourceVersion set to rev.
	Bookmark func(rev int64) []byte
	// EventBufferSize is the number of recent events kept for watches that
	// resume from a resourceVersion (0: DefaultEventBufferSize). The ring
	// grows up to it as events come, so an idle resource costs little.
	EventBufferSize int
	// BookmarkInterval is how often watchers that allow bookmarks get one
	// (0: DefaultBookmarkInterval).
	BookmarkInterval time.Duration
	// WatcherBufferSize is each watcher's queue of lines (0: default 100).
	WatcherBufferSize int
	// SlowWatcherTimeout is how long an event waits for a watcher with a
	// full queue before the watcher is terminated (0: 100ms).
	SlowWatcherTimeout time.Duration
	// ConsistentReadTimeout bounds how long a list or watch waits for the
	// cache to reach a revision (0: 3s).
	ConsistentReadTimeout time.Duration
	Logger                *slog.Logger
}

// Object is one cached object version. Objects are shared by the cache,
// its events and every reader: never mutate one.
type Object struct {
	// Key is the storage key (relative to the store prefix).
	Key             string
	Namespace, Name string
	// Rev is the object's resourceVersion (its etcd ModRevision).
	Rev int64
	// JSON is the object's encoding with metadata.resourceVersion = Rev.
	JSON   []byte
	Labels map[string]string
	// Fields are the selectable fields: metadata.name, metadata.namespace,
	// and per kind e.g. spec.nodeName, status.phase.
	Fields map[string]string
	// Value is the decoded typed object, opaque to the cacher; nil when
	// the cache keeps only the encoding (Decode then makes one on demand).
	// Read it with Decoded.
	Value any
	// Decode, when Value is nil, decodes JSON into a new typed object.
	Decode func(json []byte, rev int64) (any, error)
}

// Decoded returns the typed object: Value, or when the cache keeps only
// the encoding, a new decoding of JSON that is the caller's own and is not
// kept. It is nil when the encoding does not decode, which is logged: the
// object was stored by this apiserver, so that is a bug, not bad input.
func (o *Object) Decoded() any {
	if o.Value != nil || o.Decode == nil {
		return o.Value
	}
	v, err := o.Decode(o.JSON, o.Rev)
	if err != nil {
		slog.Error("the watch cache's encoding of an object does not decode", "key", o.Key, "rev", o.Rev, "err", err)
		return nil
	}
	return v
}

// Predicate selects objects. Namespace, Name and IndexField/IndexValue are
// exact-match hints the cacher also uses to index watchers; Label and Field
// are the full selectors (nil: everything).
type Predicate struct {
	Namespace string
	Name      string
	Label     func(labels map[string]string) bool
	Field     func(fields map[string]string) bool
	// IndexField and IndexValue require Fields[IndexField] == IndexValue.
	IndexField, IndexValue string
}

// Matches reports whether o passes every part of p.
func (p *Predicate) Matches(o *Object) bool {
	if p.Namespace != "" && o.Namespace != p.Namespace {
		return false
	}
	if p.Name != "" && o.Name != p.Name {
		return false
	}
	if p.IndexField != "" && o.Fields[p.IndexField] != p.IndexValue {
		return false
	}
	if p.Label != nil && !p.Label(o.Labels) {
		return false
	}
	if p.Field != nil && !p.Field(o.Fields) {
		return false
	}
	return true
}

// ListOptions select a list from the cache.
type ListOptions struct {
	// Namespace restricts the list ("" = all); it overrides Predicate.Namespace.
	Namespace string
	Predicate Predicate
	// ResourceVersion: "" (or Consistent) = most recent, "0" = any, N = not older than N.
	ResourceVersion string
	Consistent      bool
}

// event is one change of the cache. For a DELETED event obj is the
// previous content with Rev set to the deletion revision.
type event struct {
	typ  string
	obj  *Object
	prev *Object
	rev  int64
}

// Cacher is the watch cache of one resource.
type Cacher struct {
	// stopped is closed when Run ends, to end the watchers served by their
	// own etcd watch (fallback watchers), which the index does not hold.
	stopped     chan struct{}
	stoppedOnce sync.Once

	cfg      Config
	log      *slog.Logger
	resource string
	metrics  *metrics

	mu sync.RWMutex
	// objs and sorted hold the current objects, by key and in key order.
	objs   map[string]*Object
	sorted sortedObjects
	// rev is the revision the cache reflects: every change up to rev is in.
	rev int64
	// revCh is closed (and cleared) when rev advances or readiness changes.
	revCh   chan struct{}
	ready   bool
	readyCh chan struct{}
	events  ring
	// bufferStart: every event with a revision above it is in the ring.
	bufferStart int64
	watchers    watcherIndex

	progressCh chan struct{}
	// scratch is the dispatcher's reusable list of candidate watchers.
	scratch []*Watcher
}

// New returns a cacher; call Run to fill it.
func New(cfg Config) *Cacher {
	if cfg.EventBufferSize <= 0 {
		cfg.EventBufferSize = DefaultEventBufferSize
	}
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = DefaultBookmarkInterval
	}
	if cfg.WatcherBufferSize <= 0 {
		cfg.WatcherBufferSize = DefaultWatcherBufferSize
	}
	if cfg.SlowWatcherTimeout <= 0 {
		cfg.SlowWatcherTimeout = DefaultSlowWatcherTimeout
	}
	if cfg.ConsistentReadTimeout <= 0 {
		cfg.ConsistentReadTimeout = DefaultConsistentReadTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	resource := cfg.Resource
	if resource == "" {
		resource = strings.Trim(cfg.Prefix, "/")
	}
	c := &Cacher{
		stopped:    make(chan struct{}),
		cfg:        cfg,
		log:        cfg.Logger.With("cache", resource),
		resource:   resource,
		objs:       map[string]*Object{},
		readyCh:    make(chan struct{}),
		events:     ring{max: cfg.EventBufferSize},
		watchers:   newWatcherIndex(),
		progressCh: make(chan struct{}, 1),
	}
	c.metrics = newMetrics(c)
	return c
}

// Run fills the cache and keeps it current until ctx ends: it lists the
// prefix at one revision, then follows one etcd watch from the next
// revision. When that watch fails it terminates all watchers and starts
// over. Run returns nil when ctx ends; call it once.
func (c *Cacher) Run(ctx context.Context) error {
	go c.requestProgressLoop(ctx)
	backoff := 100 * time.Millisecond
	for {
		began := time.Now()
		err := c.listAndWatch(ctx)
		if ctx.Err() != nil {
			c.setNotReady()
			c.terminateAll()
			c.stoppedOnce.Do(func() { close(c.stopped) })
			return nil
		}
		c.setNotReady()
		c.terminateAll()
		if time.Since(began) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		c.log.Warn("watch cache restarts", "err", err, "retryIn", backoff)
		select {
		case <-ctx.Done():
			c.stoppedOnce.Do(func() { close(c.stopped) })
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// listAndWatch runs one life of the cache; it returns why it ended.
func (c *Cacher) listAndWatch(ctx context.Context) error {
	objs, rev, err := c.listAll(ctx)
	if err != nil {
		return fmt.Errorf("initial list: %w", err)
	}
	c.mu.Lock()
	c.objs = make(map[string]*Object, len(objs))
	for _, o := range objs {
		c.objs[o.Key] = o
	}
	c.sorted = newSortedObjects(objs)
	c.advanceLocked(rev)
	c.bufferStart = rev
	c.events.reset()
	c.ready = true
	close(c.readyCh)
	c.mu.Unlock()
	c.metrics.initializations.Inc()
	c.log.Debug("watch cache ready", "revision", rev, "objects", len(objs))

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := c.cfg.Store.Watch(wctx, c.cfg.Prefix, rev+1)
	tick := time.NewTicker(max(c.cfg.BookmarkInterval/10, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-ch:
			if !ok {
				return errors.New("storage watch closed")
			}
			if ev.Err != nil {
				return ev.Err
			}
			c.process(ev)
		case now := <-tick.C:
			c.sendBookmarks(now)
		}
	}
}

// listAll reads every object under the prefix at one revision, in pages.
func (c *Cacher) listAll(ctx context.Context) ([]*Object, int64, error) {
	return c.listStorage(ctx, c.cfg.Prefix, nil)
}

// listStorage reads the objects under prefix from etcd at one revision,
// keeping those pred matches (all if pred is nil).
func (c *Cacher) listStorage(ctx context.Context, prefix string, pred *Predicate) ([]*Object, int64, error) {
	var out []*Object
	var rev int64
	start := ""
	for {
		res, err := c.cfg.Store.List(ctx, prefix, storage.ListOptions{Limit: listPageSize, StartKey: start, Revision: rev})
		if err != nil {
			return nil, 0, err
		}
		rev = res.Revision
		for _, kv := range res.KVs {
			o, err := c.decode(kv.Key, kv.Value, kv.ModRevision)
			if err != nil {
				c.log.Error("skipping undecodable object", "key", kv.Key, "err", err)
				continue
			}
			if pred == nil || pred.Matches(o) {
				out = append(out, o)
			}
		}
		if !res.More || len(res.KVs) == 0 {
			return out, rev, nil
		}
		start = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
}

func (c *Cacher) decode(key string, value []byte, rev int64) (*Object, error) {
	o, err := c.cfg.Decode(key, value, rev)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, fmt.Errorf("decode %s: no object", key)
	}
	o.Key, o.Rev = key, rev
	return o, nil
}

// process applies one storage event and hands it to the watchers.
func (c *Cacher) process(se storage.Event) {
	if se.Type == storage.EventProgress {
		c.mu.Lock()
		c.advanceLocked(se.Revision)
		c.mu.Unlock()
		return
	}
	c.metrics.eventsReceived.Inc()
	key := se.KV.Key
	// Only this goroutine changes the cache, so prev cannot change between
	// this read and the update below; decoding happens outside the lock.
	c.mu.RLock()
	prev := c.objs[key]
	c.mu.RUnlock()
	ev := &event{rev: se.Revision, prev: prev}
	switch {
	case se.Type == storage.EventPut:
		o, err := c.decode(key, se.KV.Value, se.Revision)
		if err != nil {
			c.log.Error("skipping undecodable object", "key", key, "revision", se.Revision, "err", err)
			c.mu.Lock()
			c.advanceLocked(se.Revision)
			c.mu.Unlock()
			return
		}
		ev.typ, ev.obj = "MODIFIED", o
		if prev == nil {
			ev.typ = "ADDED"
		}
	case prev != nil:
		// Kubernetes renders a deleted object with its last content at the
		// deletion's resourceVersion.
		ev.typ = "DELETED"
		o, err := c.decode(key, prev.JSON, se.Revision)
		if err != nil {
			c.log.Error("cannot render deleted object", "key", key, "err", err)
			o = prev
		}
		ev.obj = o
	default:
		// Deleting what the cache never held (it was undecodable).
		c.mu.Lock()
		c.advanceLocked(se.Revision)
		c.mu.Unlock()
		return
	}

	c.mu.Lock()
	if ev.typ == "DELETED" {
		delete(c.objs, key)
		c.removeSortedLocked(key)
	} else {
		c.objs[key] = ev.obj
		c.putSortedLocked(ev.obj)
	}
	if evicted := c.events.push(ev); evicted != nil {
		c.bufferStart = evicted.rev
	}
	c.advanceLocked(se.Revision)
	candidates := c.watchers.candidates(ev, c.scratch[:0])
	c.scratch = candidates
	c.mu.Unlock()

	c.dispatch(ev, candidates)
	clear(candidates)
}

func (c *Cacher) putSortedLocked(o *Object) { c.sorted.put(o) }

func (c *Cacher) removeSortedLocked(key string) { c.sorted.remove(key) }

// advanceLocked moves the cache revision forward and wakes waiters.
func (c *Cacher) advanceLocked(rev int64) {
	if rev <= c.rev {
		return
	}
	c.rev = rev
	if c.revCh != nil {
		close(c.revCh)
		c.revCh = nil
	}
}

func (c *Cacher) setNotReady() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready {
		c.ready = false
		c.readyCh = make(chan struct{})
	}
	if c.revCh != nil {
		close(c.revCh)
		c.revCh = nil
	}
}

// Ready reports whether the cache holds a complete, current state.
func (c *Cacher) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// WaitReady blocks until the cache is ready or ctx ends.
func (c *Cacher) WaitReady(ctx context.Context) error {
	for {
		c.mu.RLock()
		ready, ch := c.ready, c.readyCh
		c.mu.RUnlock()
		if ready {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("watch cache of %s not ready: %w", c.resource, ctx.Err())
		}
	}
}

// Revision returns the revision the cache reflects.
func (c *Cacher) Revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// Get returns the cached object at key (a storage key such as
// "pods/default/web"), as of the cache's revision.
func (c *Cacher) Get(key string) (*Object, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	o, ok := c.objs[key]
	return o, ok
}

// List returns the objects matching opts sorted by key, and the revision
// of the list.
func (c *Cacher) List(ctx context.Context, opts ListOptions) ([]*Object, int64, error) {
	pred := opts.Predicate
	if opts.Namespace != "" {
		pred.Namespace = opts.Namespace
	}
	consistent := opts.Consistent || opts.ResourceVersion == ""
	var minRev int64
	if !consistent {
		rv, err := parseRV(opts.ResourceVersion)
		if err != nil {
			return nil, 0, err
		}
		minRev = rv
	} else {
		rev, err := c.cfg.Store.CurrentRevision(ctx)
		if err != nil {
			return nil, 0, err
		}
		minRev = rev
	}
	if err := c.waitFresh(ctx, minRev); err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		if !consistent && c.Ready() {
			return nil, 0, err
		}
		// The cache is behind or (re)initializing: read from etcd, as
		// Kubernetes falls back for consistent reads.
		c.metrics.consistentFallback.Inc()
		return c.listStorage(ctx, c.nsPrefix(pred.Namespace), &pred)
	}
	if consistent {
		c.metrics.consistentFromCache.Inc()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.filterLocked(&pred), c.rev, nil
}

// nsPrefix is the key prefix of a namespace ("" = the whole resource).
func (c *Cacher) nsPrefix(ns string) string {
	if ns == "" {
		return c.cfg.Prefix
	}
	return c.cfg.Prefix + ns + "/"
}

// filterLocked returns the current objects pred matches, in key order,
// scanning only the namespace's key range when pred names one.
func (c *Cacher) filterLocked(pred *Predicate) []*Object {
	var p string
	if pred.Namespace != "" {
		p = c.nsPrefix(pred.Namespace)
	}
	out := make([]*Object, 0, min(c.sorted.len(), 64))
	c.sorted.ascend(p, func(o *Object) bool {
		if p != "" && !strings.HasPrefix(o.Key, p) {
			return false
		}
		if pred.Matches(o) {
			out = append(out, o)
		}
		return true
	})
	return out
}

// WaitSynced waits until the cache holds every write etcd had committed
// when it was called, within the consistent-read bound.
func (c *Cacher) WaitSynced(ctx context.Context) error {
	rev, err := c.cfg.Store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	return c.waitFresh(ctx, rev)
}

// waitFresh waits, at most ConsistentReadTimeout, until the cache is ready
// and at revision rev or later. While it waits it asks etcd for watch
// progress, so an idle resource catches up with writes to other resources.
func (c *Cacher) waitFresh(ctx context.Context, rev int64) error {
	timer := time.NewTimer(c.cfg.ConsistentReadTimeout)
	defer timer.Stop()
	for {
		c.mu.Lock()
		cur, ready := c.rev, c.ready
		if ready && cur >= rev {
			c.mu.Unlock()
			return nil
		}
		if c.revCh == nil {
			c.revCh = make(chan struct{})
		}
		ch := c.revCh
		c.mu.Unlock()
		if ready {
			c.requestProgress()
		}
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
		case <-timer.C:
			if !ready {
				return apierrors.NewTooManyRequests("storage is (re)initializing", 1)
			}
			return tooLargeRV(rev, cur)
		case <-ctx.Done():
			return ctx.Err()
		case <-c.stopped:
			// A stopped cache is never fresh again: a read waiting for
			// it (an admission plugin's, say, during the server's
			// shutdown) ends now rather than at ConsistentReadTimeout.
			return apierrors.NewServiceUnavailable("apiserver cacher is stopped")
		}
	}
}

// requestProgress asks the progress loop for a progress notification.
func (c *Cacher) requestProgress() {
	select {
	case c.progressCh <- struct{}{}:
	default:
	}
}

// requestProgressLoop sends etcd progress requests when asked, at most
// every 50ms.
func (c *Cacher) requestProgressLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.progressCh:
		}
		if err := c.cfg.Store.RequestProgress(ctx); err != nil && ctx.Err() == nil {
			c.log.Debug("watch progress request failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func parseRV(s string) (int64, error) {
	rv, err := strconv.ParseInt(s, 10, 64)
	if err != nil || rv < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", s))
	}
	return rv, nil
}

// tooLargeRV is Kubernetes' answer to a resourceVersion the cache has not
// reached in time.
func tooLargeRV(want, cur int64) error {
	err := apierrors.NewTimeout(fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, cur), 1)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes,
		api.StatusCause{Type: api.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"})
	return err
}

// tooOldRV is the 410 of a resourceVersion older than anything available.
func tooOldRV(rv, oldest int64) error {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, oldest))
}
