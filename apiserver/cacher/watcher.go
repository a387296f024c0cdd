package cacher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// WatchOptions select a watch.
type WatchOptions struct {
	// Namespace restricts the watch ("" = all); it overrides Predicate.Namespace.
	Namespace string
	Predicate Predicate
	// ResourceVersion: "" = from the most recent state, "0" = from any
	// state, N = every change after N.
	ResourceVersion string
	// AllowBookmarks asks for a BOOKMARK every BookmarkInterval.
	AllowBookmarks bool
	// SendInitialEvents: nil = Kubernetes' legacy defaults (initial ADDED
	// events for RV "" and "0" only); true = initial ADDED events, then a
	// BOOKMARK annotated k8s.io/initial-events-end; false = changes only.
	SendInitialEvents *bool
}

// Watcher is one watch. Events yields newline-terminated JSON lines
// ({"type":"ADDED","object":{...}}) ready to write to the client; the
// channel closes when the watch ends: Stop, its context ends, an ERROR
// line was sent, or the cacher terminated it (too slow, or the cache
// restarted). A client then re-watches from the last resourceVersion seen.
//
// An idle watcher served by the cache has no goroutine of its own: the
// dispatcher queues lines straight into Events (it is "direct"), and its
// reader (the HTTP handler) is the watch's only goroutine, where
// Kubernetes has two (the handler and the cacheWatcher's). A watcher that
// starts with a backlog (initial events, events replayed from the ring or
// from etcd) has a goroutine that sends the backlog, then what the
// dispatcher queued in the meantime on in, and ends once in is empty,
// making the watcher direct.
type Watcher struct {
	c              *Cacher
	pred           Predicate
	allowBookmarks bool
	// nextBookmark is only touched by the dispatcher once registered.
	nextBookmark time.Time

	// mu guards direct, closed and in, and is held by whoever sends to
	// out when direct, so that out is closed only when no one sends.
	mu sync.Mutex
	// direct: the dispatcher sends to out; else to in, and the watcher's
	// goroutine owns out.
	direct bool
	closed bool
	in     chan []byte
	out    chan []byte
	// waiters counts dispatchers waiting, without mu, for room in in:
	// while any does, the watcher's goroutine does not go direct.
	waiters int
	// stopCtx unregisters the Stop the watch's context calls when it ends.
	stopCtx    func() bool
	done       chan struct{}
	stopOnce   sync.Once
	terminated chan struct{}
	termOnce   sync.Once
	finishOnce sync.Once
	counted    bool
}

// Events returns the watch's lines.
func (w *Watcher) Events() <-chan []byte { return w.out }

// Stop ends the watch; Events closes soon after. Safe to call more than once.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() { close(w.done) })
	if w.c != nil {
		w.c.removeWatcher(w)
	}
	w.endIfDirect()
}

// endIfDirect finishes a direct watcher, which has no goroutine to do it;
// a watcher's goroutine finishes it when it sees done or terminated.
func (w *Watcher) endIfDirect() {
	w.mu.Lock()
	direct := w.direct
	w.mu.Unlock()
	if direct {
		w.finish()
	}
}

// newWatcher makes a watcher; pumped says it starts with a backlog sent
// by a goroutine of its own (which also owns out until it is direct).
func (c *Cacher) newWatcher(pred Predicate, allowBookmarks, pumped bool) *Watcher {
	w := &Watcher{
		c:              c,
		pred:           pred,
		allowBookmarks: allowBookmarks,
		nextBookmark:   time.Now().Add(c.cfg.BookmarkInterval),
		direct:         !pumped,
		out:            make(chan []byte, c.cfg.WatcherBufferSize+16),
		done:           make(chan struct{}),
		terminated:     make(chan struct{}),
	}
	if pumped {
		w.in = make(chan []byte, c.cfg.WatcherBufferSize)
	}
	return w
}

// stopWith makes the end of ctx stop w.
func (w *Watcher) stopWith(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.stopCtx = context.AfterFunc(ctx, w.Stop)
	}
}

// Watch starts a watch as opts say. Errors found before the stream starts
// that Kubernetes reports inside the stream (a resourceVersion too old or
// too new) come as a watcher with a single ERROR line; a malformed
// resourceVersion or a cache that stays uninitialized is an error.
func (c *Cacher) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	pred := opts.Predicate
	if opts.Namespace != "" {
		pred.Namespace = opts.Namespace
	}
	rvSet := opts.ResourceVersion != ""
	var rv int64
	if rvSet {
		var err error
		if rv, err = parseRV(opts.ResourceVersion); err != nil {
			return nil, err
		}
	}
	initial := !rvSet || rv == 0
	if opts.SendInitialEvents != nil {
		initial = *opts.SendInitialEvents
	}
	endBookmark := opts.SendInitialEvents != nil && *opts.SendInitialEvents

	if err := c.waitReadyBounded(ctx); err != nil {
		return nil, err
	}
	minRev := rv
	if !rvSet {
		cur, err := c.cfg.Store.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		minRev = cur
	}
	if minRev > 0 {
		if err := c.waitFresh(ctx, minRev); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return c.errorWatcher(err), nil
		}
	}

	c.mu.Lock()
	if !c.ready {
		c.mu.Unlock()
		return nil, apierrors.NewTooManyRequests("storage is (re)initializing", 1)
	}
	startRev := c.rev
	var initObjs []*Object
	var replay []*event
	switch {
	case initial:
		initObjs = c.filterLocked(&pred)
	case !rvSet || rv == 0 || rv >= c.rev:
		// Changes from now on.
	case rv >= c.bufferStart:
		replay = c.events.since(rv)
	default:
		c.mu.Unlock()
		return c.fallbackWatch(ctx, c.newWatcher(pred, opts.AllowBookmarks, true), rv), nil
	}
	pumped := len(initObjs) > 0 || len(replay) > 0 || endBookmark
	w := c.newWatcher(pred, opts.AllowBookmarks, pumped)
	c.watchers.add(w)
	c.countWatcher(w)
	c.mu.Unlock()

	if pumped {
		var end []byte
		if endBookmark {
			end = c.initialEventsEnd(startRev)
		}
		go w.run(ctx, initObjs, replay, end)
	}
	w.stopWith(ctx)
	return w, nil
}

// waitReadyBounded waits at most ConsistentReadTimeout for the cache.
func (c *Cacher) waitReadyBounded(ctx context.Context) error {
	if c.Ready() {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, c.cfg.ConsistentReadTimeout)
	defer cancel()
	if err := c.WaitReady(wctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return apierrors.NewTooManyRequests("storage is (re)initializing", 1)
	}
	return nil
}

func (c *Cacher) countWatcher(w *Watcher) {
	w.counted = true
	c.metrics.watchers.Add(1)
}

// testHookBeforeDirect, when set (by tests only), is called by a
// watcher's goroutine each time it found in empty, before it takes mu to
// go direct.
var testHookBeforeDirect atomic.Pointer[func(*Watcher)]

// run sends the backlog of a cache-backed watcher: the initial state or
// the replayed events, then the live lines the dispatcher queued on in
// meanwhile; once in is empty the watcher becomes direct and run ends.
func (w *Watcher) run(ctx context.Context, initObjs []*Object, replay []*event, end []byte) {
	if !w.sendBacklog(ctx, initObjs, replay, end) {
		w.finish()
		return
	}
	for {
		select {
		case l := <-w.in:
			if !w.send(ctx, l) {
				w.finish()
				return
			}
			continue
		default:
		}
		if h := testHookBeforeDirect.Load(); h != nil {
			(*h)(w)
		}
		w.mu.Lock()
		if len(w.in) > 0 || w.waiters > 0 {
			// A dispatcher is queuing a line (offerWait waits for room
			// in in without mu): take it before going direct.
			w.mu.Unlock()
			select {
			case l := <-w.in:
				if !w.send(ctx, l) {
					w.finish()
					return
				}
			case <-w.done:
				w.finish()
				return
			case <-w.terminated:
				w.finish()
				return
			case <-ctx.Done():
				w.finish()
				return
			}
			continue
		}
		if w.ended(ctx) {
			w.mu.Unlock()
			w.finish()
			return
		}
		// Stop and terminate finish a direct watcher themselves; they
		// close done or terminated before they look, so one that came
		// before this was seen by ended.
		w.direct, w.in = true, nil
		w.mu.Unlock()
		return
	}
}

func (w *Watcher) sendBacklog(ctx context.Context, initObjs []*Object, replay []*event, end []byte) bool {
	for _, o := range initObjs {
		if !w.send(ctx, eventLine("ADDED", o.JSON)) {
			return false
		}
	}
	for _, ev := range replay {
		var lines eventLines
		if l := w.c.convert(w, ev, &lines); l != nil && !w.send(ctx, l) {
			return false
		}
	}
	return end == nil || w.send(ctx, end)
}

// ended reports whether w was stopped or terminated, or its context ended.
func (w *Watcher) ended(ctx context.Context) bool {
	select {
	case <-w.done:
		return true
	case <-w.terminated:
		return true
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

func (w *Watcher) send(ctx context.Context, line []byte) bool {
	select {
	case w.out <- line:
		return true
	case <-w.terminated:
	case <-w.done:
	case <-ctx.Done():
	}
	return false
}

// finish closes Events and unregisters w, once. Only the watcher's
// goroutine calls it, or, for a direct watcher, whoever ends it.
func (w *Watcher) finish() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.out)
	}
	stopCtx := w.stopCtx
	w.mu.Unlock()
	w.finishOnce.Do(func() {
		w.c.removeWatcher(w)
		if w.counted {
			w.c.metrics.watchers.Add(-1)
		}
		if stopCtx != nil {
			stopCtx()
		}
	})
}

// offer queues line for w without waiting; it reports false when w's
// queue is full. A watcher that has ended takes (and drops) anything.
func (w *Watcher) offer(line []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return true
	}
	q := w.in
	if w.direct {
		q = w.out
	}
	select {
	case q <- line:
		return true
	default:
		return false
	}
}

// offerWait queues line for w, waiting until expire fires at most; it
// reports false when it did.
//
// A direct watcher's out is waited on with mu held, so that it is not
// closed meanwhile; a watcher with a goroutine is waited on without mu,
// which that goroutine takes before it goes direct (waiters keeps it from
// going direct, so in stays the queue it drains).
func (w *Watcher) offerWait(line []byte, expire <-chan time.Time) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return true
	}
	if w.direct {
		defer w.mu.Unlock()
		return w.wait(w.out, line, expire)
	}
	q := w.in
	w.waiters++
	w.mu.Unlock()
	ok := w.wait(q, line, expire)
	w.mu.Lock()
	w.waiters--
	w.mu.Unlock()
	return ok
}

// wait sends line on q unless w ends first; false when expire fired.
func (w *Watcher) wait(q chan []byte, line []byte, expire <-chan time.Time) bool {
	select {
	case q <- line:
	case <-w.done:
	case <-w.terminated:
	case <-expire:
		return false
	}
	return true
}

func (c *Cacher) removeWatcher(w *Watcher) {
	c.mu.Lock()
	c.watchers.remove(w)
	c.mu.Unlock()
}

// terminate ends a watcher from the cacher's side.
func (c *Cacher) terminate(w *Watcher, reason string) {
	w.termOnce.Do(func() {
		close(w.terminated)
		c.metrics.terminated.Inc()
		c.log.Debug("terminating watcher", "reason", reason)
	})
	c.removeWatcher(w)
	w.endIfDirect()
}

// terminateAll ends every cache-backed watcher (the cache restarts).
func (c *Cacher) terminateAll() {
	c.mu.Lock()
	ws := c.watchers.list()
	c.watchers = newWatcherIndex()
	c.mu.Unlock()
	for _, w := range ws {
		c.terminate(w, "watch cache restarts")
	}
}

type pendingSend struct {
	w    *Watcher
	line []byte
}

// dispatch queues ev for the candidate watchers. A watcher whose queue is
// full gets SlowWatcherTimeout (shared by all blocked watchers of this
// event) to make room, then is terminated.
func (c *Cacher) dispatch(ev *event, ws []*Watcher) {
	var lines eventLines
	var blocked []pendingSend
	sent := 0
	for _, w := range ws {
		l := c.convert(w, ev, &lines)
		if l == nil {
			continue
		}
		if w.offer(l) {
			sent++
		} else {
			blocked = append(blocked, pendingSend{w, l})
		}
	}
	c.metrics.dispatched.Add(float64(sent))
	if len(blocked) == 0 {
		return
	}
	timer := time.NewTimer(c.cfg.SlowWatcherTimeout)
	defer timer.Stop()
	expired := false
	for _, p := range blocked {
		if !expired {
			if p.w.offerWait(p.line, timer.C) {
				continue
			}
			expired = true
		}
		if !p.w.offer(p.line) {
			c.terminate(p.w, "watcher too slow")
		}
	}
}

// sendBookmarks queues a BOOKMARK for watchers whose interval has passed.
func (c *Cacher) sendBookmarks(now time.Time) {
	c.mu.RLock()
	rev := c.rev
	var due []*Watcher
	for w := range c.watchers.bookmarkers {
		if !now.Before(w.nextBookmark) {
			due = append(due, w)
		}
	}
	c.mu.RUnlock()
	if len(due) == 0 {
		return
	}
	// Learn the store revision for the next round, so bookmarks of an idle
	// resource keep advancing and resumes stay within etcd's history.
	c.requestProgress()
	line := eventLine("BOOKMARK", c.cfg.Bookmark(rev))
	for _, w := range due {
		w.nextBookmark = now.Add(c.cfg.BookmarkInterval)
		w.offer(line)
	}
}

// convert is what watcher w sees of ev, as a line (nil: nothing). An
// object that stops matching w's predicate is DELETED for w, one that
// starts matching ADDED.
func (c *Cacher) convert(w *Watcher, ev *event, lines *eventLines) []byte {
	cur := ev.typ != "DELETED" && w.pred.Matches(ev.obj)
	prev := ev.prev != nil && w.pred.Matches(ev.prev)
	switch {
	case cur && !prev:
		if lines.added == nil {
			lines.added = eventLine("ADDED", ev.obj.JSON)
		}
		return lines.added
	case cur && prev:
		if lines.modified == nil {
			lines.modified = eventLine("MODIFIED", ev.obj.JSON)
		}
		return lines.modified
	case prev:
		if lines.deleted == nil {
			lines.deleted = c.deletedLine(ev)
		}
		return lines.deleted
	}
	return nil
}

// deletedLine renders ev as DELETED: the previous content at ev's revision.
func (c *Cacher) deletedLine(ev *event) []byte {
	if ev.typ == "DELETED" {
		return eventLine("DELETED", ev.obj.JSON)
	}
	o, err := c.decode(ev.prev.Key, ev.prev.JSON, ev.rev)
	if err != nil {
		c.log.Error("cannot render object leaving a selector", "key", ev.prev.Key, "err", err)
		o = ev.prev
	}
	return eventLine("DELETED", o.JSON)
}

// eventLines are the lines of one event, encoded once per type and shared.
type eventLines struct {
	added, modified, deleted []byte
}

// eventLine is one watch stream line.
func eventLine(typ string, obj []byte) []byte {
	b := make([]byte, 0, len(obj)+len(typ)+24)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	b = append(b, obj...)
	return append(b, "}\n"...)
}

// errorLine is an ERROR line whose object is the Status of err.
func errorLine(err error) []byte {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	b, merr := json.Marshal(se.Status())
	if merr != nil {
		b = []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500}`)
	}
	return eventLine("ERROR", b)
}

// errorWatcher is a watch whose only line is an ERROR for err.
func (c *Cacher) errorWatcher(err error) *Watcher {
	w := &Watcher{c: c, out: make(chan []byte, 1), done: make(chan struct{}), terminated: make(chan struct{}), closed: true}
	w.out <- errorLine(err)
	close(w.out)
	w.finishOnce.Do(func() {})
	return w
}

// initialEventsEnd is the BOOKMARK that ends the initial events of a
// sendInitialEvents=true watch.
func (c *Cacher) initialEventsEnd(rev int64) []byte {
	var obj map[string]any
	if err := json.Unmarshal(c.cfg.Bookmark(rev), &obj); err != nil || obj == nil {
		obj = map[string]any{}
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{"resourceVersion": fmt.Sprint(rev)}
	}
	md["annotations"] = map[string]string{api.InitialEventsAnnotation: "true"}
	obj["metadata"] = md
	b, _ := json.Marshal(obj)
	return eventLine("BOOKMARK", b)
}

// fallbackWatch serves a watch from a revision older than the ring buffer
// with an etcd watch of its own from rv+1; etcd's history has what the
// cache no longer holds. A compacted rv ends the stream with a 410. Once
// the watcher has caught up with what the ring holds it joins the cache's
// watchers and its etcd watch ends: a fallback watch costs an etcd watch
// (and goroutines, and a decoding of every event under its prefix) only
// while it replays the gap, not for its whole life, which matters when
// every watcher of a resource resumes at once after the cache re-listed.
func (c *Cacher) fallbackWatch(ctx context.Context, w *Watcher, rv int64) *Watcher {
	fctx, cancel := context.WithCancel(ctx)
	ch := c.cfg.Store.Watch(fctx, c.nsPrefix(w.pred.Namespace), rv+1)
	c.countWatcher(w)
	c.metrics.fallbackWatches.Inc()
	go func() {
		replay, adopted := w.runFallback(fctx, ch, rv)
		cancel()
		if !adopted {
			w.finish()
			return
		}
		w.run(ctx, nil, replay, nil)
	}()
	go func() {
		select {
		case <-c.stopped:
			cancel()
		case <-fctx.Done():
		}
	}()
	w.stopWith(ctx)
	return w
}

// fallbackPos is how far a fallback watcher has read etcd: every change
// up to rev, except that at rev itself only keys may have been read so
// far (a transaction writes several keys at one revision).
type fallbackPos struct {
	rev  int64
	keys []string
	// complete: every change at rev was read too (a progress event).
	complete bool
}

func (p *fallbackPos) saw(rev int64, key string) {
	if rev != p.rev {
		p.rev, p.keys = rev, p.keys[:0]
	}
	p.keys = append(p.keys, key)
	p.complete = false
}

func (p *fallbackPos) progress(rev int64) {
	if rev > p.rev {
		p.rev, p.keys = rev, p.keys[:0]
		p.complete = true
	}
}

// adopt registers fallback watcher w with the cache when the ring holds
// every change after what w has read from etcd, and returns the events
// of the ring w has not seen yet, to send before the live ones. ok is
// false when the ring does not reach back that far yet, or the cache is
// behind w (or not ready).
func (c *Cacher) adopt(w *Watcher, pos *fallbackPos) (replay []*event, ok bool) {
	from := pos.rev
	if !pos.complete {
		// The changes at pos.rev not read yet are in the ring too.
		from = pos.rev - 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready || from < c.bufferStart || c.rev < pos.rev {
		return nil, false
	}
	for _, ev := range c.events.since(from) {
		if ev.rev == pos.rev && !pos.complete && slices.Contains(pos.keys, ev.obj.Key) {
			continue
		}
		replay = append(replay, ev)
	}
	c.watchers.add(w)
	return replay, true
}

// runFallback feeds w from its etcd watch until the watch ends (the
// stream ends, w or its context stops, or an ERROR was sent), or until w
// has caught up with the cache and adopt registered it: then it returns
// the events to replay from the ring and adopted true.
func (w *Watcher) runFallback(ctx context.Context, ch <-chan storage.Event, rv int64) (replay []*event, adopted bool) {
	c := w.c
	lastBookmark := time.Now()
	pos := fallbackPos{rev: rv, complete: true}
	for {
		var se storage.Event
		var ok bool
		select {
		case se, ok = <-ch:
			if !ok {
				return nil, false
			}
		case <-w.done:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
		if se.Err != nil {
			var ce *storage.CompactedError
			if errors.As(se.Err, &ce) {
				w.send(ctx, errorLine(tooOldRV(rv, ce.CompactRevision)))
			} else {
				w.send(ctx, errorLine(apierrors.NewInternalError(se.Err)))
			}
			return nil, false
		}
		if se.Type == storage.EventProgress {
			pos.progress(se.Revision)
			if w.allowBookmarks && time.Since(lastBookmark) >= c.cfg.BookmarkInterval {
				lastBookmark = time.Now()
				if !w.send(ctx, eventLine("BOOKMARK", c.cfg.Bookmark(se.Revision))) {
					return nil, false
				}
			}
		} else {
			if ev := c.storageEvent(se); ev != nil {
				var lines eventLines
				if l := c.convert(w, ev, &lines); l != nil && !w.send(ctx, l) {
					return nil, false
				}
			}
			pos.saw(se.Revision, se.KV.Key)
		}
		// Caught up with etcd for now: join the cache if it reaches back.
		if len(ch) == 0 {
			if replay, ok := c.adopt(w, &pos); ok {
				return replay, true
			}
		}
	}
}

// storageEvent decodes a storage event with its previous value, for
// watchers that read etcd directly.
func (c *Cacher) storageEvent(se storage.Event) *event {
	key := se.KV.Key
	ev := &event{rev: se.Revision}
	if se.PrevKV != nil {
		prev, err := c.decode(key, se.PrevKV.Value, se.PrevKV.ModRevision)
		if err != nil {
			c.log.Error("skipping undecodable previous object", "key", key, "err", err)
		} else {
			ev.prev = prev
		}
	}
	var err error
	switch se.Type {
	case storage.EventPut:
		ev.typ = "MODIFIED"
		if ev.prev == nil {
			ev.typ = "ADDED"
		}
		ev.obj, err = c.decode(key, se.KV.Value, se.Revision)
	case storage.EventDelete:
		if se.PrevKV == nil || ev.prev == nil {
			c.log.Error("delete event without its previous object", "key", key, "revision", se.Revision)
			return nil
		}
		ev.typ = "DELETED"
		ev.obj, err = c.decode(key, se.PrevKV.Value, se.Revision)
	default:
		return nil
	}
	if err != nil {
		c.log.Error("skipping undecodable object", "key", key, "revision", se.Revision, "err", err)
		return nil
	}
	return ev
}
