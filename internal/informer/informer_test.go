package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
)

var quiet = slog.New(slog.DiscardHandler)

const leasesPath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases"

func lease(name, rv string) api.Lease {
	return api.Lease{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv}}
}

func listBody(rv string, items ...api.Lease) string {
	b, _ := json.Marshal(api.LeaseList{ListMeta: api.ListMeta{ResourceVersion: rv}, Items: items})
	return string(b)
}

func event(typ string, obj any) string {
	b, _ := json.Marshal(obj)
	e, _ := json.Marshal(api.WatchEvent{Type: typ, Object: b})
	return string(e)
}

func bookmark(rv string) string {
	return event(api.Bookmark, api.Lease{TypeMeta: api.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
		ObjectMeta: api.ObjectMeta{ResourceVersion: rv}})
}

func expiredEvent() string {
	return event(api.Error, apierrors.NewResourceExpired("too old resource version: 15 (19)").ErrStatus)
}

// step is one scripted answer: it checks the request's query and writes the
// response. hold keeps a watch open until the client leaves.
type step struct {
	watch bool
	query map[string]string // expected parameters ("" = must be absent)
	body  string            // list body, or watch lines separated by \n
	code  int
	hold  bool
}

// scriptServer answers requests in order from a script.
type scriptServer struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	n     int
	done  chan struct{} // closed when the last step is reached
	srv   *httptest.Server
}

func newScriptServer(t *testing.T, steps ...step) *scriptServer {
	s := &scriptServer{t: t, steps: steps, done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scriptServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := s.n
	s.n++
	if i >= len(s.steps) {
		s.mu.Unlock()
		s.t.Errorf("unexpected request %d: %s", i, r.URL)
		http.Error(w, "script over", http.StatusInternalServerError)
		return
	}
	st := s.steps[i]
	if i == len(s.steps)-1 {
		close(s.done)
	}
	s.mu.Unlock()
	if r.URL.Path != leasesPath {
		s.t.Errorf("request %d: path %s", i, r.URL.Path)
	}
	q := r.URL.Query()
	if (q.Get("watch") == "true") != st.watch {
		s.t.Errorf("request %d: watch=%q, script expects watch=%v", i, q.Get("watch"), st.watch)
	}
	for k, want := range st.query {
		if got := q.Get(k); got != want {
			s.t.Errorf("request %d (%s): %s=%q, want %q", i, r.URL.RawQuery, k, got, want)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if st.code != 0 {
		w.WriteHeader(st.code)
	}
	if st.body != "" {
		for _, line := range strings.Split(st.body, "\n") {
			fmt.Fprintln(w, line)
			w.(http.Flusher).Flush()
		}
	}
	if st.hold {
		<-r.Context().Done()
	}
}

func (s *scriptServer) client(t *testing.T) *client.Client {
	c, err := client.New(&client.Config{Host: s.srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recorder records handler calls as strings.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *recorder) handler() Handler[api.Lease] {
	return Handler[api.Lease]{
		OnAdd: func(o *api.Lease, initial bool) {
			r.add(fmt.Sprintf("add %s@%s initial=%v", o.Name, o.ResourceVersion, initial))
		},
		OnUpdate: func(old, cur *api.Lease) {
			r.add(fmt.Sprintf("update %s@%s->%s", cur.Name, old.ResourceVersion, cur.ResourceVersion))
		},
		OnDelete: func(o *api.Lease, unknown bool) {
			r.add(fmt.Sprintf("delete %s@%s unknown=%v", o.Name, o.ResourceVersion, unknown))
		},
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func storeState(s *cache.Store[api.Lease]) []string {
	var out []string
	for _, o := range s.List() {
		out = append(out, o.Name+"@"+o.ResourceVersion)
	}
	sort.Strings(out)
	return out
}

// TestListWatchRelist drives an informer through a list, a watch that ends,
// a resumed watch that fails with 410 Expired, and a fresh list.
func TestListWatchRelist(t *testing.T) {
	t.Parallel()
	srv := newScriptServer(t,
		step{query: map[string]string{"resourceVersion": "0", "limit": ""},
			body: listBody("11", lease("a", "10"), lease("b", "11"))},
		step{watch: true, query: map[string]string{"resourceVersion": "11", "allowWatchBookmarks": "true"},
			body: strings.Join([]string{
				event(api.Added, lease("c", "12")),
				event(api.Modified, lease("a", "13")),
				bookmark("15"),
			}, "\n")},
		// Resumed from the bookmark's resourceVersion, without a list.
		step{watch: true, query: map[string]string{"resourceVersion": "15"},
			body: strings.Join([]string{event(api.Deleted, lease("b", "16")), expiredEvent()}, "\n")},
		// The re-list after 410 is a consistent, paged read.
		step{query: map[string]string{"resourceVersion": "", "limit": "500"},
			body: listBody("20", lease("c", "17"), lease("d", "18"))},
		step{watch: true, query: map[string]string{"resourceVersion": "20"}, hold: true},
	)
	inf := New[api.Lease](For[api.Lease](srv.client(t), "ns", client.ListOptions{}), Options[api.Lease]{Logger: quiet})
	var rec recorder
	inf.AddEventHandler(rec.handler())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()

	want := []string{
		"add a@10 initial=true",
		"add b@11 initial=true",
		"add c@12 initial=false",
		"update a@10->13",
		"delete b@16 unknown=false",
		"update c@12->17",
		"add d@18 initial=false",
		"delete a@13 unknown=true",
	}
	waitFor(t, "all notifications", func() bool { return len(rec.get()) >= len(want) })
	<-srv.done
	if got := rec.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("handler calls\n got %q\nwant %q", got, want)
	}
	if got := storeState(inf.Store()); !reflect.DeepEqual(got, []string{"c@17", "d@18"}) {
		t.Errorf("store %v", got)
	}
	if !inf.HasSynced() || inf.LastSyncResourceVersion() != "20" {
		t.Errorf("synced %v, rv %q", inf.HasSynced(), inf.LastSyncResourceVersion())
	}
	if l, err := inf.Lister().Namespace("ns").Get("d"); err != nil || l.Kind != "Lease" {
		t.Errorf("lister Get: %v %v", l, err)
	}
	if _, err := inf.Lister().Namespace("ns").Get("a"); !apierrors.IsNotFound(err) ||
		err.Error() != `leases.coordination.k8s.io "a" not found` {
		t.Errorf("lister Get of a deleted object: %v", err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestResync(t *testing.T) {
	t.Parallel()
	srv := newScriptServer(t,
		step{body: listBody("5", lease("a", "4"), lease("b", "5"))},
		step{watch: true, hold: true},
	)
	inf := New[api.Lease](For[api.Lease](srv.client(t), "ns", client.ListOptions{}), Options[api.Lease]{Resync: 30 * time.Millisecond, Logger: quiet})
	var rec recorder
	inf.AddEventHandler(rec.handler())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.Run(ctx)
	waitFor(t, "two resyncs", func() bool {
		n := 0
		for _, c := range rec.get() {
			if c == "update a@4->4" || c == "update b@5->5" {
				n++
			}
		}
		return n >= 4
	})
}

// countingServer counts list and watch requests and answers with fixed
// behaviour.
type countingServer struct {
	lists, watches atomic.Int32
	srv            *httptest.Server
}

func newCountingServer(t *testing.T, list, watch http.HandlerFunc) *countingServer {
	cs := &countingServer{}
	cs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			cs.watches.Add(1)
			watch(w, r)
			return
		}
		cs.lists.Add(1)
		list(w, r)
	}))
	t.Cleanup(cs.srv.Close)
	return cs
}

func okList(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, listBody("3", lease("a", "3"))) }

func TestBackoffNeverHotLoops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		list, watch   http.HandlerFunc
		maxLists      int32
		maxWatches    int32
		minRequests   int32
		wantSynced    bool
		wantNoRelists bool
	}{
		{"list fails", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, func(w http.ResponseWriter, r *http.Request) {}, 6, 0, 2, false, false},
		{"watch ends at once", okList, func(w http.ResponseWriter, r *http.Request) {}, 1, 6, 2, true, true},
		{"watch refused", okList, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "forbidden", http.StatusForbidden)
		}, 1, 6, 2, true, true},
		{"watch 410 at once", okList, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintln(w, expiredEvent())
		}, 6, 6, 2, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := newCountingServer(t, tt.list, tt.watch)
			c, _ := client.New(&client.Config{Host: cs.srv.URL, QPS: -1})
			inf := New[api.Lease](For[api.Lease](c, "ns", client.ListOptions{}), Options[api.Lease]{Logger: quiet})
			inf.backoffInit, inf.backoffMax = 20*time.Millisecond, 80*time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
			defer cancel()
			inf.Run(ctx)
			// Backoff 20, 40, 80, 80... with jitter up to 2x: at most about
			// 6 attempts in 400ms; a hot loop makes hundreds.
			l, w := cs.lists.Load(), cs.watches.Load()
			if l > tt.maxLists || w > tt.maxWatches {
				t.Errorf("%d lists, %d watches in 400ms: not backing off", l, w)
			}
			if l+w < tt.minRequests {
				t.Errorf("%d lists, %d watches: not retrying", l, w)
			}
			if inf.HasSynced() != tt.wantSynced {
				t.Errorf("synced %v", inf.HasSynced())
			}
		})
	}
}

func TestLateHandlerAndSlowHandler(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := newScriptServer(t,
		step{body: listBody("2", lease("a", "1"), lease("b", "2"))},
		step{watch: true, body: strings.Join([]string{
			event(api.Modified, lease("a", "3")),
			event(api.Added, lease("c", "4")),
		}, "\n"), hold: true},
	)
	inf := New[api.Lease](For[api.Lease](srv.client(t), "ns", client.ListOptions{}), Options[api.Lease]{
		Logger:   quiet,
		Indexers: cache.Indexers[api.Lease]{"first-letter": func(l *api.Lease) []string { return []string{l.Name[:1]} }},
	})
	// A handler that blocks must not hold up the store or other handlers.
	var slowCalls atomic.Int32
	inf.AddEventHandler(Handler[api.Lease]{OnAdd: func(*api.Lease, bool) {
		slowCalls.Add(1)
		<-release
	}})
	var fast recorder
	inf.AddEventHandler(fast.handler())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	if !WaitForCacheSync(ctx, inf) {
		t.Fatal("not synced")
	}
	waitFor(t, "watch events in the store", func() bool {
		return reflect.DeepEqual(storeState(inf.Store()), []string{"a@3", "b@2", "c@4"})
	})
	waitFor(t, "fast handler", func() bool { return len(fast.get()) == 4 })
	if n := slowCalls.Load(); n != 1 {
		t.Errorf("slow handler called %d times while blocked", n)
	}
	if objs, _ := inf.Store().ByIndex("first-letter", "c"); len(objs) != 1 {
		t.Errorf("indexer: %v", objs)
	}

	// A handler added now first gets the cached objects as initial adds.
	var late recorder
	inf.AddEventHandler(late.handler())
	waitFor(t, "late handler", func() bool { return len(late.get()) == 3 })
	got := late.get()
	sort.Strings(got)
	if want := []string{"add a@3 initial=true", "add b@2 initial=true", "add c@4 initial=true"}; !reflect.DeepEqual(got, want) {
		t.Errorf("late handler %v", got)
	}
	close(release)
	waitFor(t, "slow handler catches up", func() bool { return slowCalls.Load() == 3 })
	cancel()
	<-done
}

func TestFactory(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	selectors := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("watch") == "true" {
			<-r.Context().Done()
			return
		}
		mu.Lock()
		selectors[r.URL.Path+"?"+url.Values{"labelSelector": q["labelSelector"]}.Encode()] = true
		mu.Unlock()
		fmt.Fprint(w, listBody("1"))
	}))
	defer srv.Close()
	c, _ := client.New(&client.Config{Host: srv.URL, QPS: -1})
	f := NewFactory(c, FactoryOptions{Logger: quiet})
	a := Shared[api.Lease](f, "ns", client.ListOptions{})
	b := Shared[api.Lease](f, "ns", client.ListOptions{})
	sel := Shared[api.Lease](f, "ns", client.ListOptions{LabelSelector: "app=x"})
	other := Shared[api.Lease](f, "", client.ListOptions{})
	if a != b {
		t.Error("same key, different informers")
	}
	if a == sel || a == other || sel == other {
		t.Error("different keys share an informer")
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	f.Start(ctx) // idempotent
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if !f.WaitForCacheSync(wctx) {
		t.Fatal("factory informers did not sync")
	}
	late := Shared[api.Lease](f, "late", client.ListOptions{})
	f.Start(ctx)
	if !WaitForCacheSync(wctx, late) {
		t.Fatal("informer requested after Start did not run")
	}
	cancel()
	f.Wait()
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{
		leasesPath + "?":                                       true,
		leasesPath + "?labelSelector=app%3Dx":                  true,
		"/apis/coordination.k8s.io/v1/leases?":                 true,
		"/apis/coordination.k8s.io/v1/namespaces/late/leases?": true,
	}
	if !reflect.DeepEqual(selectors, want) {
		t.Errorf("lists %v, want %v", selectors, want)
	}
}

// TestStripManagedFields: a factory with the transform caches listed and
// watched objects without their managedFields, and its handlers see them
// so; the rest of the object is kept.
func TestStripManagedFields(t *testing.T) {
	t.Parallel()
	withFields := func(name, rv string) api.Lease {
		l := lease(name, rv)
		l.Labels = map[string]string{"k": "v"}
		l.ManagedFields = []api.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Update", APIVersion: "coordination.k8s.io/v1"}}
		return l
	}
	srv := newScriptServer(t,
		step{query: map[string]string{"resourceVersion": "0"}, body: listBody("11", withFields("a", "10"))},
		step{watch: true, query: map[string]string{"resourceVersion": "11"}, body: event(api.Added, withFields("b", "12")), hold: true},
	)
	f := NewFactory(srv.client(t), FactoryOptions{Logger: quiet, Transform: StripManagedFields})
	inf := Shared[api.Lease](f, "ns", client.ListOptions{})
	var seen atomic.Int32
	inf.AddEventHandler(Handler[api.Lease]{OnAdd: func(l *api.Lease, _ bool) {
		if l.ManagedFields != nil || l.Labels["k"] != "v" {
			t.Errorf("handler got %s with managedFields %v, labels %v", l.Name, l.ManagedFields, l.Labels)
		}
		seen.Add(1)
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); f.Wait() }()
	f.Start(ctx)
	waitFor(t, "both objects", func() bool { return seen.Load() == 2 })
	for _, l := range inf.Store().List() {
		if l.ManagedFields != nil {
			t.Errorf("cached %s keeps managedFields %v", l.Name, l.ManagedFields)
		}
	}
}
