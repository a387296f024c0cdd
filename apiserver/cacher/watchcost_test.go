package cacher

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// The tests here measure what an idle watch and a dispatched event cost at
// the cache layer, with a cacher fed by hand (no etcd): N watchers each
// selecting the pods of one node by spec.nodeName, as N kubelets do.

type costPod struct {
	Metadata struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		ResourceVersion string `json:"resourceVersion,omitempty"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName,omitempty"`
		Data     string `json:"data,omitempty"`
	} `json:"spec"`
}

func costDecode(key string, value []byte, rev int64) (*Object, error) {
	var p costPod
	if err := json.Unmarshal(value, &p); err != nil {
		return nil, err
	}
	p.Metadata.ResourceVersion = strconv.FormatInt(rev, 10)
	b, err := json.Marshal(&p)
	if err != nil {
		return nil, err
	}
	return &Object{Namespace: p.Metadata.Namespace, Name: p.Metadata.Name, JSON: b,
		Fields: map[string]string{"metadata.name": p.Metadata.Name, "metadata.namespace": p.Metadata.Namespace, "spec.nodeName": p.Spec.NodeName}}, nil
}

func costPodJSON(name, node, data string) []byte {
	var p costPod
	p.Metadata.Name, p.Metadata.Namespace, p.Spec.NodeName, p.Spec.Data = name, "default", node, data
	b, _ := json.Marshal(&p)
	return b
}

// readyCacher is a cacher that serves watches without etcd: ready at
// revision 1 and fed through process.
func readyCacher(t testing.TB) *Cacher {
	t.Helper()
	c := New(Config{Prefix: "pods/", Resource: "costpods", Decode: costDecode,
		Bookmark: func(rev int64) []byte { return fmt.Appendf(nil, `{"metadata":{"resourceVersion":"%d"}}`, rev) }})
	c.mu.Lock()
	c.ready = true
	close(c.readyCh)
	c.rev, c.bufferStart = 1, 1
	c.mu.Unlock()
	return c
}

// nodeWatchers starts n watches of pods with spec.nodeName=node-i, as
// kubelets watch: bookmarks allowed, changes after resourceVersion 1.
func nodeWatchers(t testing.TB, c *Cacher, n int) []*Watcher {
	t.Helper()
	ws := make([]*Watcher, n)
	for i := range ws {
		node := fmt.Sprint("node-", i)
		w, err := c.Watch(context.Background(), WatchOptions{
			ResourceVersion: "1",
			AllowBookmarks:  true,
			Predicate: Predicate{
				Field:      func(f map[string]string) bool { return f["spec.nodeName"] == node },
				IndexField: "spec.nodeName", IndexValue: node,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	return ws
}

// heapInUse is the memory in use by the heap and goroutine stacks.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// settledGoroutines is the goroutine count once goroutines that are ending
// have ended.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return m
		}
		n = m
	}
	return n
}

func putEvent(rev int64, name, node, data string) storage.Event {
	return storage.Event{Type: storage.EventPut, Revision: rev,
		KV: storage.KV{Key: "pods/default/" + name, Value: costPodJSON(name, node, data), ModRevision: rev}}
}

// TestIdleWatchCost reports the goroutines and heap an idle node-selected
// watch holds at the cache layer, and checks that the cacher runs no
// goroutine of its own per watch: the consumer (the HTTP handler) is the
// watch's only goroutine, as in Kubernetes, where the handler and the
// cacheWatcher's process goroutine are two.
func TestIdleWatchCost(t *testing.T) {
	const n = 5000
	c := readyCacher(t)
	g0, h0 := settledGoroutines(), heapInUse()
	ws := nodeWatchers(t, c, n)
	g1, h1 := settledGoroutines(), heapInUse()
	perG := float64(g1-g0) / n
	t.Logf("%d node-selected watches: %.2f goroutines and %d bytes of heap and stacks per watch (cache layer)", n, perG, int64(h1-h0)/n)
	if perG > 0.01 {
		t.Errorf("the cacher runs %.2f goroutines per idle watch; want none (the consumer is the watch's goroutine)", perG)
	}
	for _, w := range ws {
		w.Stop()
	}
	runtime.KeepAlive(ws)
	c.mu.RLock()
	left := c.watchers.len()
	c.mu.RUnlock()
	if left != 0 {
		t.Errorf("%d watchers still registered after Stop", left)
	}
}

// TestNodeEventReachesOnlyItsWatcher checks that a pod event is offered to
// the watchers of its node (and of the node it left) only, not to every
// node-selected watcher, and that the transitions still come out right.
func TestNodeEventReachesOnlyItsWatcher(t *testing.T) {
	const n = 1000
	c := readyCacher(t)
	ws := nodeWatchers(t, c, n)
	c.process(putEvent(2, "p", "node-7", ""))
	c.mu.RLock()
	ev := c.events.since(1)[0]
	got := len(c.watchers.candidates(ev, nil))
	c.mu.RUnlock()
	if got != 1 {
		t.Errorf("an ADDED pod of node-7 is offered to %d of %d watchers; want 1", got, n)
	}
	c.process(putEvent(3, "p", "node-9", ""))
	c.mu.RLock()
	ev = c.events.since(2)[0]
	got = len(c.watchers.candidates(ev, nil))
	c.mu.RUnlock()
	if got != 2 {
		t.Errorf("a pod moving from node-7 to node-9 is offered to %d watchers; want 2", got)
	}
	want := map[int][]string{7: {"ADDED", "DELETED"}, 9: {"ADDED"}}
	for i, types := range want {
		for _, typ := range types {
			select {
			case l := <-ws[i].Events():
				var e struct{ Type string }
				if err := json.Unmarshal(l, &e); err != nil || e.Type != typ {
					t.Errorf("node-%d: got %q, want a %s line", i, l, typ)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("node-%d: no %s line", i, typ)
			}
		}
	}
	for _, w := range ws {
		select {
		case l := <-w.Events():
			t.Errorf("unexpected line %q", l)
		default:
		}
		w.Stop()
	}
}

// BenchmarkDispatchNodeEvent is the cost of one pod update (decode, cache
// update, dispatch) with N node-selected watchers, the pod's own watcher
// being drained. With the spec.nodeName index it does not grow with N.
func BenchmarkDispatchNodeEvent(b *testing.B) {
	for _, n := range []int{1, 1000, 5000} {
		b.Run(fmt.Sprintf("watchers=%d", n), func(b *testing.B) {
			c := readyCacher(b)
			ws := nodeWatchers(b, c, n)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range ws[0].Events() {
				}
			}()
			evs := make([]storage.Event, b.N)
			for i := range evs {
				evs[i] = putEvent(int64(i+2), "p", "node-0", strconv.Itoa(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range evs {
				c.process(evs[i])
			}
			b.StopTimer()
			for _, w := range ws {
				w.Stop()
			}
			<-done
		})
	}
}

// fallbackEnv is a cacher on etcd with a 5-event buffer, holding pod p0
// created at first and updated 20 times.
func fallbackEnv(t *testing.T) (c *Cacher, store *storage.Store, first int64) {
	t.Helper()
	b := etcdtest.Start(t)
	store = storage.New(b.Client(), "/registry")
	c = New(Config{Store: store, Prefix: "pods/", Resource: "fallbackpods", Decode: costDecode, EventBufferSize: 5,
		Bookmark: func(rev int64) []byte { return fmt.Appendf(nil, `{"metadata":{"resourceVersion":"%d"}}`, rev) },
		Logger:   etcdtest.Logger()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	first, err := store.Create(ctx, "pods/default/p0", costPodJSON("p0", "node-0", ""))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := store.Update(ctx, "pods/default/p0", costPodJSON("p0", "node-0", strconv.Itoa(i)), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	return c, store, first
}

// waitWatchers waits until the cache's index holds n watchers.
func waitWatchers(t *testing.T, c *Cacher, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.RLock()
		got := c.watchers.len()
		c.mu.RUnlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d watchers served from the cache, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFallbackWatchCost checks what a watch resuming from a
// resourceVersion older than the event buffer costs once it has caught
// up: it replays the gap from an etcd watch of its own (with goroutines in
// the cacher, the store and the etcd client: 4 a watch before this
// change, for its whole life), then joins the cache's watchers, so in the
// end it holds no goroutine in the cacher, like any idle watch.
func TestFallbackWatchCost(t *testing.T) {
	const n = 200
	c, store, first := fallbackEnv(t)
	g0 := settledGoroutines()
	ws := make([]*Watcher, n)
	for i := range ws {
		node := fmt.Sprint("node-", i)
		w, err := c.Watch(context.Background(), WatchOptions{ResourceVersion: strconv.FormatInt(first, 10), AllowBookmarks: true,
			Predicate: Predicate{Field: func(f map[string]string) bool { return f["spec.nodeName"] == node }, IndexField: "spec.nodeName", IndexValue: node}})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	// node-0's watch has the 20 updates from etcd, each once, in order.
	for want := first + 1; want <= first+20; want++ {
		if got := lineRev(t, ws[0]); got != want {
			t.Fatalf("node-0's watch: event at %d, want %d", got, want)
		}
	}
	waitWatchers(t, c, n)
	per := float64(settledGoroutines()-g0) / n
	t.Logf("%d watches resuming from before the event buffer: %.2f goroutines per watch once caught up (cache layer, etcd client included)", n, per)
	if per > 0.01 {
		t.Errorf("%.2f goroutines per caught-up fallback watch; want none, as a watch served from the cache", per)
	}
	// Then the live changes come from the cache: node-0's update to
	// node-0's watch only, node-1's pod to node-1's.
	rev, err := store.Update(context.Background(), "pods/default/p0", costPodJSON("p0", "node-0", "live"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(context.Background(), "pods/default/p1", costPodJSON("p1", "node-1", "")); err != nil {
		t.Fatal(err)
	}
	if got := lineRev(t, ws[0]); got != rev {
		t.Fatalf("node-0's watch: event at %d, want %d", got, rev)
	}
	if got := lineRev(t, ws[1]); got != rev+1 {
		t.Fatalf("node-1's watch: event at %d, want %d", got, rev+1)
	}
	for _, w := range ws {
		w.Stop()
	}
}

// TestFallbackWatchJoinsCacheUnderWrites resumes a watch of every pod from
// before the buffer while pods are written, and checks that it gets every
// revision once, in order, across its move from etcd to the cache.
func TestFallbackWatchJoinsCacheUnderWrites(t *testing.T) {
	c, store, first := fallbackEnv(t)
	const writes = 200
	ctx := context.Background()
	done := make(chan int64, 1)
	go func() {
		var last int64
		for i := range writes {
			name := fmt.Sprint("q", i%7)
			rev, err := store.Create(ctx, "pods/default/"+name, costPodJSON(name, "node-0", ""))
			if err != nil {
				if rev, err = store.Update(ctx, "pods/default/"+name, costPodJSON(name, "node-0", strconv.Itoa(i)), 0); err != nil {
					t.Error(err)
					break
				}
			}
			last = rev
		}
		done <- last
	}()
	w, err := c.Watch(ctx, WatchOptions{ResourceVersion: strconv.FormatInt(first, 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Each write is one revision: the watch reads them as they come.
	last := first + 20 + writes
	for want := first + 1; want <= last; want++ {
		if got := lineRev(t, w); got != want {
			t.Fatalf("event at %d, want %d", got, want)
		}
	}
	if got := <-done; got != last {
		t.Fatalf("last write at %d, want %d", got, last)
	}
	waitWatchers(t, c, 1)
}

// lineRev is the resourceVersion of w's next line.
func lineRev(t *testing.T, w *Watcher) int64 {
	t.Helper()
	select {
	case l, ok := <-w.Events():
		if !ok {
			t.Fatal("watch closed")
		}
		var e struct {
			Type   string
			Object costPod
		}
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		rev, _ := strconv.ParseInt(e.Object.Metadata.ResourceVersion, 10, 64)
		return rev
	case <-time.After(10 * time.Second):
		t.Fatal("no line within 10s")
	}
	return 0
}
