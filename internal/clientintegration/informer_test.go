package clientintegration

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// quietLogger is the informers' logger: silent unless MINIK8S_TEST_LOG is
// set, as for the test apiservers.
func quietLogger() *slog.Logger {
	if os.Getenv("MINIK8S_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// recorder collects an informer's notifications as text lines:
// "ADD name", "ADD name initial", "UPDATE name", "DELETE name",
// "DELETE name unknown"; with rv set, resourceVersions are appended.
type recorder[T any, PT interface {
	*T
	api.Object
}] struct {
	withRV bool
	mu     sync.Mutex
	lines  []string
}

func (r *recorder[T, PT]) handler() informer.Handler[T] {
	meta := func(o *T) *api.ObjectMeta { return PT(o).GetObjectMeta() }
	return informer.Handler[T]{
		OnAdd: func(o *T, initial bool) {
			l := "ADD " + meta(o).Name
			if initial {
				l += " initial"
			}
			r.add(l, meta(o).ResourceVersion)
		},
		OnUpdate: func(old, o *T) {
			if meta(old).ResourceVersion == meta(o).ResourceVersion {
				return // a re-list or resync delivering the same state
			}
			r.add("UPDATE "+meta(o).Name, meta(o).ResourceVersion)
		},
		OnDelete: func(o *T, unknown bool) {
			l := "DELETE " + meta(o).Name
			if unknown {
				l += " unknown"
			}
			r.add(l, "")
		},
	}
}

func (r *recorder[T, PT]) add(line, rv string) {
	if r.withRV && rv != "" {
		line += " @" + rv
	}
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
}

func (r *recorder[T, PT]) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// waitFor waits until the recorded lines are want.
func (r *recorder[T, PT]) waitFor(t *testing.T, want []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.get()
		if slices.Equal(got, want) {
			return
		}
		if len(got) > len(want) || time.Now().After(deadline) {
			t.Fatalf("notifications:\n  got  %q\n  want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expectNoMore checks nothing beyond want arrives for a while.
func (r *recorder[T, PT]) expectNoMore(t *testing.T, want []string, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	if got := r.get(); !slices.Equal(got, want) {
		t.Fatalf("notifications:\n  got  %q\n  want %q", got, want)
	}
}

// storeMatches checks the informer's store holds exactly the objects of a
// fresh list, at the same resourceVersions.
func storeMatches[T any, PT interface {
	*T
	api.Object
}](ctx context.Context, t *testing.T, inf *informer.Informer[T], lw informer.ListerWatcher[T]) {
	t.Helper()
	eventually(t, 10*time.Second, "store to match a fresh list", func() bool {
		l, err := lw.List(ctx, client.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		want := map[string]string{}
		for i := range l.Items {
			m := PT(&l.Items[i]).GetObjectMeta()
			want[m.Namespace+"/"+m.Name] = m.ResourceVersion
		}
		got := map[string]string{}
		for _, o := range inf.Store().List() {
			m := PT(o).GetObjectMeta()
			got[m.Namespace+"/"+m.Name] = m.ResourceVersion
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return true
		}
		t.Logf("store %v, list %v", got, want)
		return false
	})
}

func startInformer[T any](t *testing.T, ctx context.Context, inf *informer.Informer[T]) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("informer did not stop within 10s of its context ending")
		}
	})
	if !informer.WaitForCacheSync(ctx, inf) {
		t.Fatal("informer did not sync")
	}
}

// TestInformerDeliversInOrder lists then watches a real server: the
// initial objects arrive flagged as such, later changes arrive through the
// handlers in the order they were made, with the resourceVersions the
// writes returned, and the store ends equal to a fresh list.
func TestInformerDeliversInOrder(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ctx := testContext(t)
	ns := createNamespace(ctx, t, c, "inf-order")
	cms := client.Resource[api.ConfigMap](c).Namespace(ns)
	a, err := cms.Create(ctx, newConfigMap("", "a", nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := cms.Create(ctx, newConfigMap("", "b", nil))
	if err != nil {
		t.Fatal(err)
	}
	// Objects of another namespace stay out of a namespaced informer.
	other := createNamespace(ctx, t, c, "inf-order-other")
	if _, err := cms.Namespace(other).Create(ctx, newConfigMap("", "elsewhere", nil)); err != nil {
		t.Fatal(err)
	}

	// The informer's first list uses resourceVersion "0" (any cached state,
	// as client-go does), which may predate the creates; a consistent list
	// first waits until the watch cache has caught up with them.
	if _, err := cms.List(ctx, client.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	lw := informer.For[api.ConfigMap](c, ns, client.ListOptions{})
	inf := informer.New[api.ConfigMap](lw, informer.Options[api.ConfigMap]{Logger: quietLogger()})
	rec := &recorder[api.ConfigMap, *api.ConfigMap]{withRV: true}
	inf.AddEventHandler(rec.handler())
	startInformer(t, ctx, inf)

	initial := []string{"ADD a initial @" + a.ResourceVersion, "ADD b initial @" + b.ResourceVersion}
	eventually(t, 5*time.Second, "initial adds", func() bool { return len(rec.get()) == 2 })
	got := rec.get()
	sort.Strings(got) // the initial list has no defined order
	if !slices.Equal(got, initial) {
		t.Fatalf("initial notifications %q, want %q", got, initial)
	}
	want := rec.get()

	// A sequence of writes, each recorded with the resourceVersion the
	// server answered.
	step := func(line string, obj *api.ConfigMap, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			line += " @" + obj.ResourceVersion
		}
		want = append(want, line)
	}
	c1, err := cms.Create(ctx, newConfigMap("", "c", map[string]string{"v": "1"}))
	step("ADD c", c1, err)
	c1.Data["v"] = "2"
	c2, err := cms.Update(ctx, c1)
	step("UPDATE c", c2, err)
	a2, err := cms.Patch(ctx, "a", client.MergePatchType, []byte(`{"data":{"x":"y"}}`))
	step("UPDATE a", a2, err)
	step("DELETE c", nil, cms.Delete(ctx, "c", nil))
	d, err := cms.Create(ctx, newConfigMap("", "d", nil))
	step("ADD d", d, err)
	step("DELETE b", nil, cms.Delete(ctx, "b", nil))
	// A no-op patch writes nothing and notifies nothing.
	if _, err := cms.Patch(ctx, "a", client.MergePatchType, []byte(`{"data":{"x":"y"}}`)); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, want)
	storeMatches(ctx, t, inf, informer.ListerWatcher[api.ConfigMap](lw))
	// The lister reads the same cache.
	if got, err := inf.Lister().Namespace(ns).Get("a"); err != nil || got.Data["x"] != "y" {
		t.Errorf("lister get a = %+v, %v", got, err)
	}
	if _, err := inf.Lister().Namespace(ns).Get("b"); !apierrors.IsNotFound(err) {
		t.Errorf("lister get b after delete: %v", err)
	}
	if rvOf(t, inf.LastSyncResourceVersion()) < rvOf(t, d.ResourceVersion) {
		t.Errorf("LastSyncResourceVersion %s older than the last write %s", inf.LastSyncResourceVersion(), d.ResourceVersion)
	}
	rec.expectNoMore(t, want, 300*time.Millisecond)
}

// gatedLW wraps a ListerWatcher so a test can cut the informer's watch and
// hold it disconnected, and counts lists and 410s.
type gatedLW[T any] struct {
	inner informer.ListerWatcher[T]

	mu      sync.Mutex
	gate    chan struct{} // while not nil, Watch waits for it to close
	waiting int           // Watch calls waiting at the gate
	cancel  context.CancelFunc
	lists   int
	gone    int // watches refused or ended with 410
}

func (g *gatedLW[T]) List(ctx context.Context, opts client.ListOptions) (*api.List[T], error) {
	g.mu.Lock()
	g.lists++
	g.mu.Unlock()
	return g.inner.List(ctx, opts)
}

func (g *gatedLW[T]) Watch(ctx context.Context, opts client.ListOptions) (client.Watcher[T], error) {
	g.mu.Lock()
	gate := g.gate
	if gate != nil {
		g.waiting++
	}
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := g.inner.Watch(wctx, opts)
	if err != nil {
		cancel()
		if apierrors.IsGone(err) {
			g.mu.Lock()
			g.gone++
			g.mu.Unlock()
		}
		return nil, err
	}
	g.mu.Lock()
	g.cancel = cancel
	g.mu.Unlock()
	return newSpyWatcher(w, cancel, func(ev client.Event[T]) {
		if ev.Type == api.Error && ev.Status != nil && ev.Status.Code == 410 {
			g.mu.Lock()
			g.gone++
			g.mu.Unlock()
		}
	}), nil
}

// disconnect closes the gate and ends the current watch; the informer's
// next Watch waits at the gate.
func (g *gatedLW[T]) disconnect() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	cancel := g.cancel
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (g *gatedLW[T]) reconnect() {
	g.mu.Lock()
	close(g.gate)
	g.gate = nil
	g.mu.Unlock()
}

func (g *gatedLW[T]) counts() (lists, gone, waiting int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lists, g.gone, g.waiting
}

// spyWatcher forwards a watch's events, showing each to a callback.
type spyWatcher[T any] struct {
	inner  client.Watcher[T]
	cancel context.CancelFunc
	out    chan client.Event[T]
	done   chan struct{}
	once   sync.Once
}

func newSpyWatcher[T any](w client.Watcher[T], cancel context.CancelFunc, see func(client.Event[T])) *spyWatcher[T] {
	s := &spyWatcher[T]{inner: w, cancel: cancel, out: make(chan client.Event[T]), done: make(chan struct{})}
	go func() {
		defer close(s.out)
		for ev := range w.ResultChan() {
			see(ev)
			select {
			case s.out <- ev:
			case <-s.done:
				return
			}
		}
	}()
	return s
}

func (s *spyWatcher[T]) ResultChan() <-chan client.Event[T] { return s.out }

func (s *spyWatcher[T]) Stop() {
	s.once.Do(func() {
		close(s.done)
		s.inner.Stop()
		s.cancel()
	})
}

// TestInformerRelistsAfterGone cuts an informer's watch, makes more
// changes than the watch cache keeps, compacts etcd past the informer's
// resourceVersion, and lets it reconnect: the watch must fail with 410, and
// the informer must list again, infer the deletion it missed, and go on
// watching. Without a re-list on 410 the deleted object stays in the store.
func TestInformerRelistsAfterGone(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, func(o *app.Options) { o.WatchCacheEvents = 8 })
	c := newClient(t, s)
	ctx := testContext(t)
	ns := createNamespace(ctx, t, c, "inf-gone")
	cms := client.Resource[api.ConfigMap](c).Namespace(ns)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := cms.Create(ctx, newConfigMap("", n, nil)); err != nil {
			t.Fatal(err)
		}
	}
	lw := &gatedLW[api.ConfigMap]{inner: informer.For[api.ConfigMap](c, ns, client.ListOptions{})}
	inf := informer.New[api.ConfigMap](lw, informer.Options[api.ConfigMap]{Logger: quietLogger()})
	rec := &recorder[api.ConfigMap, *api.ConfigMap]{}
	inf.AddEventHandler(rec.handler())
	startInformer(t, ctx, inf)
	if _, err := cms.Create(ctx, newConfigMap("", "live", nil)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the live add", func() bool { return slices.Contains(rec.get(), "ADD live") })

	lw.disconnect()
	eventually(t, 10*time.Second, "the informer to wait at the gate", func() bool {
		_, _, waiting := lw.counts()
		return waiting == 1
	})
	lastRV := rvOf(t, inf.LastSyncResourceVersion())
	seen := len(rec.get())

	// While it is away: a delete, an update, an add, and enough filler
	// that the watch cache's 8 events no longer reach back to lastRV.
	if err := cms.Delete(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "b", client.MergePatchType, []byte(`{"data":{"k":"v"}}`)); err != nil {
		t.Fatal(err)
	}
	var last *api.ConfigMap
	for i := range 20 {
		var err error
		if last, err = cms.Create(ctx, newConfigMap("", fmt.Sprintf("filler-%02d", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	compactAt := rvOf(t, last.ResourceVersion)
	if compactAt <= lastRV {
		t.Fatalf("compaction revision %d not past the informer's %d", compactAt, lastRV)
	}
	if _, err := s.Backend().Client().Compact(ctx, compactAt); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if got := rec.get(); len(got) != seen {
		t.Fatalf("notifications while disconnected: %q", got[seen:])
	}
	lists, gone, _ := lw.counts()
	if lists != 1 || gone != 0 {
		t.Fatalf("before reconnecting: %d lists, %d 410s; want 1 and 0", lists, gone)
	}

	lw.reconnect()
	eventually(t, 10*time.Second, "a re-list", func() bool {
		lists, _, _ := lw.counts()
		return lists >= 2
	})
	storeMatches(ctx, t, inf, informer.ListerWatcher[api.ConfigMap](lw.inner))
	lists, gone, _ = lw.counts()
	if gone < 1 {
		t.Errorf("the informer re-listed without a 410 (%d lists): the test did not exercise the expired path", lists)
	}
	// Handlers run on goroutines of their own: the store may be current
	// before they are told.
	wantAfter := []string{"DELETE a unknown", "UPDATE b", "ADD filler-00", "ADD filler-19"}
	var after []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		after = rec.get()[seen:]
		missing := slices.DeleteFunc(slices.Clone(wantAfter), func(w string) bool { return slices.Contains(after, w) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the re-list, notifications %q lack %q", after, missing)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(after); n != 2+20 {
		t.Errorf("%d notifications after the re-list, want 22 (a delete, an update, 20 adds): %q", n, after)
	}
	for _, l := range after {
		if strings.HasPrefix(l, "UPDATE c") || strings.HasPrefix(l, "UPDATE live") || strings.HasPrefix(l, "ADD c") {
			t.Errorf("unchanged object notified after the re-list: %q", l)
		}
	}

	// And it watches again from the list.
	if _, err := cms.Create(ctx, newConfigMap("", "after", nil)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "an add after the re-list", func() bool { return slices.Contains(rec.get(), "ADD after") })
	if lists, _, _ := lw.counts(); lists != 2 {
		t.Errorf("%d lists, want 2", lists)
	}
}

// TestInformerSurvivesAPIServerRestart restarts the apiserver on the same
// address and data dir: the informer reconnects, resumes its watch from
// its resourceVersion without listing again, and sees each change made
// after the restart exactly once, deletions as real events.
func TestInformerSurvivesAPIServerRestart(t *testing.T) {
	t.Parallel()
	r := startRestartable(t)
	c := newClientFor(t, r.URL())
	ctx := testContext(t)
	ns := createNamespace(ctx, t, c, "inf-restart")
	cms := client.Resource[api.ConfigMap](c).Namespace(ns)
	for _, n := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, newConfigMap("", n, nil)); err != nil {
			t.Fatal(err)
		}
	}
	lw := &gatedLW[api.ConfigMap]{inner: informer.For[api.ConfigMap](c, ns, client.ListOptions{})}
	inf := informer.New[api.ConfigMap](lw, informer.Options[api.ConfigMap]{Logger: quietLogger()})
	rec := &recorder[api.ConfigMap, *api.ConfigMap]{withRV: true}
	inf.AddEventHandler(rec.handler())
	startInformer(t, ctx, inf)
	eventually(t, 5*time.Second, "initial adds", func() bool { return len(rec.get()) == 2 })
	want := rec.get()

	// Changes made while the informer is cut off, then a restart, then
	// changes made before it reconnects.
	lw.disconnect()
	eventually(t, 10*time.Second, "the informer to wait at the gate", func() bool {
		_, _, waiting := lw.counts()
		return waiting == 1
	})
	b, err := cms.Patch(ctx, "b", client.MergePatchType, []byte(`{"data":{"k":"1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "UPDATE b @"+b.ResourceVersion)
	start := time.Now()
	r.restart()
	t.Logf("restart took %v", time.Since(start))
	if err := cms.Delete(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, "DELETE a")
	cNew, err := cms.Create(ctx, newConfigMap("", "c", nil))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "ADD c @"+cNew.ResourceVersion)
	lw.reconnect()
	start = time.Now()
	rec.waitFor(t, want)
	t.Logf("resumed after %v", time.Since(start))

	// Live again: a change after the reconnection, and one more restart
	// with the watch open.
	b.Data["k"] = "2"
	b2, err := cms.Update(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "UPDATE b @"+b2.ResourceVersion)
	rec.waitFor(t, want)
	// The resumed watch started before the new watch cache's first
	// revision, so the apiserver serves it from etcd; such a watch holds up
	// the apiserver's Stop for 10 s (see TestAPIServerStopEndsWatches).
	// Cut it once so the informer re-watches from the cache.
	lw.disconnect()
	eventually(t, 10*time.Second, "the informer to wait at the gate", func() bool {
		_, _, waiting := lw.counts()
		return waiting == 1
	})
	lw.reconnect()
	eventually(t, 10*time.Second, "the informer to watch again", func() bool {
		_, _, waiting := lw.counts()
		return waiting == 0
	})
	start = time.Now()
	r.restart()
	t.Logf("second restart took %v", time.Since(start))
	d, err := cms.Create(ctx, newConfigMap("", "d", nil))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, "ADD d @"+d.ResourceVersion)
	start = time.Now()
	rec.waitFor(t, want)
	t.Logf("resumed after %v", time.Since(start))
	storeMatches(ctx, t, inf, informer.ListerWatcher[api.ConfigMap](lw.inner))
	if lists, gone, _ := lw.counts(); lists != 1 || gone != 0 {
		t.Errorf("%d lists and %d 410s across restarts; want 1 and 0 (the watch resumes)", lists, gone)
	}
}

// TestInformerFieldSelector runs a pod informer on spec.nodeName=node-a:
// it holds only that node's pods, a pod bound to node-a later arrives as an
// add, and a pod leaving the selection (deleted) goes.
func TestInformerFieldSelector(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ctx := testContext(t)
	ns := createNamespace(ctx, t, c, "inf-fields")
	pods := client.Resource[api.Pod](c).Namespace(ns)
	for name, node := range map[string]string{"on-a": "node-a", "on-b": "node-b", "unbound": ""} {
		p := newPod("", name, nil)
		p.Spec.NodeName = node
		if _, err := pods.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pods.Create(ctx, newPod("", "later", nil)); err != nil {
		t.Fatal(err)
	}
	// The informer's first list (resourceVersion "0") is whatever the
	// watch cache holds; a consistent list first waits for it to hold the
	// creates, so on-a comes in that list and not as a watch event.
	if _, err := pods.List(ctx, client.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	sel := client.ListOptions{FieldSelector: "spec.nodeName=node-a"}
	lw := informer.For[api.Pod](c, "", sel) // all namespaces
	inf := informer.New[api.Pod](lw, informer.Options[api.Pod]{Logger: quietLogger()})
	rec := &recorder[api.Pod, *api.Pod]{}
	inf.AddEventHandler(rec.handler())
	startInformer(t, ctx, inf)
	want := []string{"ADD on-a initial"}
	rec.waitFor(t, want)

	bind := func(name, node string) {
		t.Helper()
		b := &api.Binding{ObjectMeta: api.ObjectMeta{Name: name}, Target: api.ObjectReference{Kind: "Node", Name: node}}
		if err := pods.Subresource(name, "binding").Post(ctx, b, nil); err != nil {
			t.Fatalf("bind %s to %s: %v", name, node, err)
		}
	}
	bind("unbound", "node-b") // not ours: nothing
	bind("later", "node-a")   // enters the selection: an add
	want = append(want, "ADD later")
	rec.waitFor(t, want)
	if _, err := pods.Patch(ctx, "on-b", client.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(ctx, "later", client.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`)); err != nil {
		t.Fatal(err)
	}
	want = append(want, "UPDATE later")
	rec.waitFor(t, want)
	// A bound pod is deleted gracefully (an update), then for good.
	zero := int64(0)
	if err := pods.Delete(ctx, "on-a", nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, "UPDATE on-a")
	rec.waitFor(t, want)
	if p, err := inf.Lister().Namespace(ns).Get("on-a"); err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("cached on-a after graceful delete: %+v, %v", p, err)
	}
	if err := pods.Delete(ctx, "on-a", &api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "on-b", &api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "DELETE on-a")
	rec.waitFor(t, want)
	storeMatches(ctx, t, inf, informer.ListerWatcher[api.Pod](lw))
	if keys := inf.Store().ListKeys(); !slices.Equal(keys, []string{ns + "/later"}) {
		t.Errorf("store keys = %v", keys)
	}
	rec.expectNoMore(t, want, 300*time.Millisecond)
}
