package cacher_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/cacher"
)

func names(objs []*cacher.Object) string {
	var s []string
	for _, o := range objs {
		s = append(s, o.Namespace+"/"+o.Name)
	}
	return strings.Join(s, ",")
}

func TestConsistentListSeesWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	for i := range 20 {
		rev := e.create("ns", fmt.Sprintf("p%02d", i), "", nil)
		objs, listRev, err := e.c.List(ctx, cacher.ListOptions{Consistent: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != i+1 || listRev < rev {
			t.Fatalf("list right after write %d: %d objects at %d, want %d at >= %d", i, len(objs), listRev, i+1, rev)
		}
	}
	// A write to another resource moves the store revision; the idle cache
	// still answers a consistent list itself, after catching up through
	// etcd progress notifications.
	other, err := e.store.Create(ctx, "services/ns/s", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	before := fallbacks(t, e.c)
	_, listRev, err := e.c.List(ctx, cacher.ListOptions{ResourceVersion: ""})
	if err != nil || listRev < other {
		t.Fatalf("consistent list after a foreign write: rev %d err %v, want >= %d", listRev, err, other)
	}
	if fallbacks(t, e.c) != before {
		t.Fatal("consistent list of an idle resource fell back to etcd")
	}
	if o, ok := e.c.Get(key("ns", "p03")); !ok || o.Name != "p03" || !strings.Contains(string(o.JSON), `"resourceVersion"`) {
		t.Fatalf("Get = %+v, %v", o, ok)
	}
	if _, ok := e.c.Get(key("ns", "nope")); ok {
		t.Fatal("Get of a missing key found something")
	}
}

func fallbacks(t *testing.T, c *cacher.Cacher) float64 {
	t.Helper()
	return metricValue(t, c, "apiserver_watch_cache_consistent_read_total", "fallback", "true")
}

// metricValue gathers c's metrics and returns the value of the series of
// name whose label is value ("" label: the only series).
func metricValue(t *testing.T, c *cacher.Cacher, name, label, value string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := c.Register(reg); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			ok := label == ""
			for _, l := range m.GetLabel() {
				ok = ok || (l.GetName() == label && l.GetValue() == value)
			}
			if !ok {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no metric %s{%s=%q}", name, label, value)
	return 0
}

func TestListResourceVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *cacher.Config) { c.ConsistentReadTimeout = 300 * time.Millisecond })
	ctx := t.Context()
	rev := e.create("ns", "a", "", nil)
	objs, _, err := e.c.List(ctx, cacher.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10)})
	if err != nil || len(objs) != 1 {
		t.Fatalf("list not older than %d: %v %v", rev, names(objs), err)
	}
	if _, _, err := e.c.List(ctx, cacher.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Fatalf("list at any version: %v", err)
	}
	began := time.Now()
	_, _, err = e.c.List(ctx, cacher.ListOptions{ResourceVersion: strconv.FormatInt(rev+1000, 10)})
	if apierrors.CodeForError(err) != 504 || !strings.Contains(err.Error(), "Too large resource version") {
		t.Fatalf("list at a future version: %v, want 504 Too large resource version", err)
	}
	if d := time.Since(began); d < 250*time.Millisecond || d > 3*time.Second {
		t.Fatalf("future version answered after %v, want about the 300ms timeout", d)
	}
	if _, _, err := e.c.List(ctx, cacher.ListOptions{ResourceVersion: "abc"}); apierrors.CodeForError(err) != 400 {
		t.Fatalf("list at version abc: %v, want 400", err)
	}
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	e.create("b", "x", "n1", map[string]string{"app": "web"})
	e.create("a", "z", "n2", map[string]string{"app": "web"})
	e.create("a", "y", "n1", map[string]string{"app": "db"})
	e.create("ab", "w", "n1", map[string]string{"app": "web"})
	tests := []struct {
		name string
		opts cacher.ListOptions
		want string
	}{
		{"all, sorted by key", cacher.ListOptions{}, "a/y,a/z,ab/w,b/x"},
		{"namespace", cacher.ListOptions{Namespace: "a"}, "a/y,a/z"},
		{"namespace in the predicate", cacher.ListOptions{Predicate: cacher.Predicate{Namespace: "ab"}}, "ab/w"},
		{"label", cacher.ListOptions{Predicate: cacher.Predicate{Label: labelIs("app", "web")}}, "a/z,ab/w,b/x"},
		{"field index", cacher.ListOptions{Predicate: cacher.Predicate{IndexField: "spec.nodeName", IndexValue: "n1"}}, "a/y,ab/w,b/x"},
		{"field func", cacher.ListOptions{Predicate: cacher.Predicate{Field: func(f map[string]string) bool { return f["spec.nodeName"] == "n2" }}}, "a/z"},
		{"name", cacher.ListOptions{Predicate: cacher.Predicate{Name: "x"}}, "b/x"},
		{"namespace and label", cacher.ListOptions{Namespace: "a", Predicate: cacher.Predicate{Label: labelIs("app", "web")}}, "a/z"},
		{"missing namespace", cacher.ListOptions{Namespace: "c"}, ""},
	}
	for _, tt := range tests {
		objs, _, err := e.c.List(ctx, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(objs); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

type step struct {
	typ, name string
	rev       int64
}

// churn makes n changes to pods in ns "ns" and returns them.
func churn(e *env, n int) []step {
	var out []step
	exists := map[string]bool{}
	for i := range n {
		name := fmt.Sprintf("p%d", i%3)
		switch {
		case !exists[name]:
			out = append(out, step{"ADDED", name, e.create("ns", name, "", map[string]string{"i": fmt.Sprint(i)})})
			exists[name] = true
		case i%5 == 4:
			out = append(out, step{"DELETED", name, e.delete("ns", name)})
			exists[name] = false
		default:
			out = append(out, step{"MODIFIED", name, e.update("ns", name, "", map[string]string{"i": fmt.Sprint(i)})})
		}
	}
	return out
}

func expectSteps(t *testing.T, w *cacher.Watcher, steps []step) {
	t.Helper()
	for _, s := range steps {
		ev := next(t, w, false)
		if ev.Type != s.typ || ev.Object.Metadata.Name != s.name || ev.rv() != s.rev {
			t.Fatalf("got %v, want %s %s@%d", ev, s.typ, s.name, s.rev)
		}
	}
}

func TestWatchResumeInBuffer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	steps := churn(e, 30)
	// Wait until the cache has everything, so the resumes are served from
	// the ring.
	if _, _, err := e.c.List(t.Context(), cacher.ListOptions{Consistent: true}); err != nil {
		t.Fatal(err)
	}
	for _, from := range []int{0, 7, 29} {
		w := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(steps[from].rev, 10)})
		expectSteps(t, w, steps[from+1:])
		expectNone(t, w, 100*time.Millisecond)
		live := e.update("ns", "p0", "", map[string]string{"live": "1"})
		ev := next(t, w, false)
		if ev.rv() != live {
			t.Fatalf("live event %v, want @%d", ev, live)
		}
		steps = append(steps, step{ev.Type, "p0", live})
		w.Stop()
		expectClosed(t, w)
	}
}

func TestWatchResumeOlderThanBuffer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *cacher.Config) { c.EventBufferSize = 4 })
	steps := churn(e, 25)
	if _, _, err := e.c.List(t.Context(), cacher.ListOptions{Consistent: true}); err != nil {
		t.Fatal(err)
	}
	// From the first change on: far older than the 4 buffered events, so
	// etcd serves it; nothing is lost.
	w := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(steps[0].rev, 10)})
	expectSteps(t, w, steps[1:])
	live := e.create("ns", "live", "", nil)
	if ev := next(t, w, false); ev.Type != "ADDED" || ev.rv() != live {
		t.Fatalf("live event %v, want ADDED @%d", ev, live)
	}

	// A cacher started after the changes (an apiserver restart) holds none
	// of them; a client resuming from before the restart still gets all.
	c2 := e.start()
	w2 := watch(t, c2, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(steps[10].rev, 10)})
	expectSteps(t, w2, append(steps[11:], step{"ADDED", "live", live}))
}

func TestWatchTooOldIsGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *cacher.Config) { c.EventBufferSize = 2 })
	steps := churn(e, 10)
	cur, err := e.store.CurrentRevision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.Compact(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.c.List(t.Context(), cacher.ListOptions{Consistent: true}); err != nil {
		t.Fatal(err)
	}
	w := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(steps[1].rev, 10)})
	ev := next(t, w, true)
	want := fmt.Sprintf("too old resource version: %d (%d)", steps[1].rev, cur)
	if ev.Type != "ERROR" || ev.Object.Code != 410 || ev.Object.Reason != "Expired" || ev.Object.Message != want || ev.Object.Kind != "Status" {
		t.Fatalf("got %v (%+v), want ERROR 410 Expired %q", ev, ev.Object, want)
	}
	expectClosed(t, w)
}

func TestWatchTooNew(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *cacher.Config) { c.ConsistentReadTimeout = 300 * time.Millisecond })
	rev := e.create("ns", "a", "", nil)
	w := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(rev+100, 10)})
	ev := next(t, w, true)
	if ev.Type != "ERROR" || ev.Object.Code != 504 || !strings.Contains(ev.Object.Message, "Too large resource version") {
		t.Fatalf("got %v, want ERROR 504 Too large resource version", ev)
	}
	expectClosed(t, w)
	if _, err := e.c.Watch(t.Context(), cacher.WatchOptions{ResourceVersion: "-3"}); apierrors.CodeForError(err) != 400 {
		t.Fatalf("watch at -3: %v, want 400", err)
	}
}

func TestSelectorTransitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	byLabel := watch(t, e.c, cacher.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(false), Predicate: cacher.Predicate{Label: labelIs("app", "web")}})
	byNode := watch(t, e.c, cacher.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(false), Predicate: cacher.Predicate{IndexField: "spec.nodeName", IndexValue: "n1"}})
	otherNS := watch(t, e.c, cacher.WatchOptions{Namespace: "other", ResourceVersion: "0", SendInitialEvents: ptr(false)})

	type want struct {
		w    *cacher.Watcher
		typ  string
		node string
		app  string
	}
	tests := []struct {
		name   string
		do     func() int64
		expect []want
	}{
		{"create unlabeled, unbound", func() int64 { return e.create("ns", "p", "", nil) }, nil},
		{"label it", func() int64 { return e.update("ns", "p", "", map[string]string{"app": "web"}) }, []want{{byLabel, "ADDED", "", "web"}}},
		{"bind to n1", func() int64 { return e.update("ns", "p", "n1", map[string]string{"app": "web"}) },
			[]want{{byLabel, "MODIFIED", "n1", "web"}, {byNode, "ADDED", "n1", "web"}}},
		{"unlabel", func() int64 { return e.update("ns", "p", "n1", map[string]string{"app": "db"}) },
			// DELETED carries the previous content at the new revision.
			[]want{{byLabel, "DELETED", "n1", "web"}, {byNode, "MODIFIED", "n1", "db"}}},
		{"move to n2", func() int64 { return e.update("ns", "p", "n2", map[string]string{"app": "web"}) },
			[]want{{byLabel, "ADDED", "n2", "web"}, {byNode, "DELETED", "n1", "db"}}},
		{"delete", func() int64 { return e.delete("ns", "p") }, []want{{byLabel, "DELETED", "n2", "web"}}},
	}
	for _, tt := range tests {
		rev := tt.do()
		for _, w := range tt.expect {
			ev := next(t, w.w, false)
			if ev.Type != w.typ || ev.rv() != rev || ev.Object.Spec.NodeName != w.node || ev.Object.Metadata.Labels["app"] != w.app {
				t.Fatalf("%s: got %v node=%q app=%q, want %s @%d node=%q app=%q", tt.name, ev, ev.Object.Spec.NodeName,
					ev.Object.Metadata.Labels["app"], w.typ, rev, w.node, w.app)
			}
		}
	}
	expectNone(t, byLabel, 100*time.Millisecond)
	expectNone(t, byNode, 10*time.Millisecond)
	expectNone(t, otherNS, 10*time.Millisecond)
}

func TestInitialEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create("ns", "b", "", nil)
	e.create("ns", "a", "", nil)
	last := e.create("other", "c", "", nil)

	t.Run("sendInitialEvents", func(t *testing.T) {
		w := watch(t, e.c, cacher.WatchOptions{Namespace: "ns", AllowBookmarks: true, SendInitialEvents: ptr(true)})
		for _, n := range []string{"a", "b"} {
			if ev := next(t, w, false); ev.Type != "ADDED" || ev.Object.Metadata.Name != n {
				t.Fatalf("got %v, want ADDED ns/%s", ev, n)
			}
		}
		ev := next(t, w, true)
		if ev.Type != "BOOKMARK" || ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] != "true" || ev.rv() < last || ev.Object.Kind != "Pod" {
			t.Fatalf("got %v %+v, want the initial-events-end BOOKMARK at >= %d", ev, ev.Object.Metadata, last)
		}
		rev := e.update("ns", "a", "x", nil)
		if ev := next(t, w, false); ev.Type != "MODIFIED" || ev.rv() != rev {
			t.Fatalf("got %v, want MODIFIED @%d", ev, rev)
		}
	})
	t.Run("unset resourceVersion", func(t *testing.T) {
		// Consistent: a write just before the watch is in its initial state.
		rev := e.create("ns", "fresh", "", nil)
		w := watch(t, e.c, cacher.WatchOptions{Namespace: "ns"})
		got := map[string]int64{}
		for range 3 {
			ev := next(t, w, true)
			if ev.Type != "ADDED" {
				t.Fatalf("got %v, want ADDED", ev)
			}
			got[ev.Object.Metadata.Name] = ev.rv()
		}
		if got["fresh"] != rev || len(got) != 3 {
			t.Fatalf("initial state %v, want a, b and fresh@%d", got, rev)
		}
		expectNone(t, w, 100*time.Millisecond)
	})
	t.Run("resourceVersion 0 without initial events", func(t *testing.T) {
		w := watch(t, e.c, cacher.WatchOptions{Namespace: "ns", ResourceVersion: "0", SendInitialEvents: ptr(false)})
		expectNone(t, w, 100*time.Millisecond)
		rev := e.delete("ns", "b")
		if ev := next(t, w, false); ev.Type != "DELETED" || ev.rv() != rev || ev.Object.Metadata.Name != "b" {
			t.Fatalf("got %v, want DELETED ns/b @%d", ev, rev)
		}
	})
}

func TestBookmarks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *cacher.Config) { c.BookmarkInterval = 100 * time.Millisecond })
	rev := e.create("ns", "a", "", nil)
	with := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(rev, 10), AllowBookmarks: true})
	without := watch(t, e.c, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(rev, 10)})
	// A write elsewhere: bookmarks of this idle resource move past it.
	other, err := e.store.Create(t.Context(), "services/ns/s", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		ev := next(t, with, true)
		if ev.Type != "BOOKMARK" || ev.Object.Kind != "Pod" {
			t.Fatalf("got %v, want BOOKMARK", ev)
		}
		if ev.rv() >= other {
			break
		}
		if ev.rv() < rev {
			t.Fatalf("bookmark at %d, before the watch's %d", ev.rv(), rev)
		}
		select {
		case <-deadline:
			t.Fatalf("bookmarks stuck at %d, want >= %d", ev.rv(), other)
		default:
		}
	}
	select {
	case line := <-without.Events():
		t.Fatalf("watcher without bookmarks got %s", line)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestSlowWatcherTerminated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *cacher.Config) {
		c.WatcherBufferSize = 2
		c.SlowWatcherTimeout = 20 * time.Millisecond
	})
	slow := watch(t, e.c, cacher.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(false)})
	fast := watch(t, e.c, cacher.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(false)})
	var got []wevent
	done := make(chan struct{})
	go func() {
		defer close(done)
		for line := range fast.Events() {
			got = append(got, parseLine(t, line))
			if len(got) == 60 {
				return
			}
		}
	}()
	for i := range 60 {
		e.create("ns", fmt.Sprint("p", i), "", nil)
	}
	<-done
	if len(got) != 60 {
		t.Fatalf("fast watcher got %d events, want 60", len(got))
	}
	expectClosed(t, slow)
	if v := metricValue(t, e.c, "apiserver_terminated_watchers_total", "", ""); v != 1 {
		t.Fatalf("terminated watchers = %v, want 1", v)
	}
	if v := metricValue(t, e.c, "apiserver_registered_watchers", "", ""); v != 1 {
		t.Fatalf("registered watchers = %v, want 1 (the fast one)", v)
	}
}

func TestThousandWatchersGetEveryEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const watchers, events = 1000, 20
	var wg sync.WaitGroup
	errs := make(chan error, watchers)
	ws := make([]*cacher.Watcher, watchers)
	for i := range ws {
		ws[i] = watch(t, e.c, cacher.WatchOptions{ResourceVersion: "0", SendInitialEvents: ptr(false)})
	}
	for i := range watchers {
		wg.Go(func() {
			timeout := time.After(20 * time.Second)
			var last int64
			for n := 0; n < events; {
				select {
				case line, ok := <-ws[i].Events():
					if !ok {
						errs <- fmt.Errorf("watcher %d closed after %d events", i, n)
						return
					}
					ev := parseLine(t, line)
					if ev.Type == "BOOKMARK" {
						continue
					}
					if ev.rv() <= last {
						errs <- fmt.Errorf("watcher %d: revision %d after %d", i, ev.rv(), last)
						return
					}
					last = ev.rv()
					n++
				case <-timeout:
					errs <- fmt.Errorf("watcher %d: timed out after %d events", i, n)
					return
				}
			}
		})
	}
	for i := range events {
		e.create("ns", fmt.Sprint("p", i), "", nil)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestRegisterTwoCachers(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	for _, p := range []string{"pods/", "nodes/"} {
		c := cacher.New(cacher.Config{Prefix: p, Decode: decode, Bookmark: bookmark})
		if err := c.Register(reg); err != nil {
			t.Fatalf("register %s: %v", p, err)
		}
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// TestListOfStoppedCacherEnds: a read waiting for a stopped cache to be
// ready (an admission plugin's during the server's shutdown) ends at once
// with 503, not at ConsistentReadTimeout.
func TestListOfStoppedCacherEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *cacher.Config) { c.ConsistentReadTimeout = 20 * time.Second })
	cfg := e.cfg
	cfg.Store = e.store
	c := cacher.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx)
	}()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	began := time.Now()
	_, _, err := c.List(context.Background(), cacher.ListOptions{ResourceVersion: "0"})
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("list of a stopped cache answered after %v", d)
	}
	if err != nil && apierrors.CodeForError(err) != 503 {
		t.Fatalf("list of a stopped cache: %v, want 503 or the cached objects", err)
	}
}
