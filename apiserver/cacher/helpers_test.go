package cacher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/apiserver/storage"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// testObj is a small pod-like object for the tests.
type testObj struct {
	Kind     string `json:"kind,omitempty"`
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace,omitempty"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
		Labels          map[string]string `json:"labels,omitempty"`
		Annotations     map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName,omitempty"`
		Data     string `json:"data,omitempty"`
	} `json:"spec"`
}

func obj(ns, name, node string, labels map[string]string) []byte {
	var o testObj
	o.Kind = "Pod"
	o.Metadata.Name, o.Metadata.Namespace, o.Metadata.Labels = name, ns, labels
	o.Spec.NodeName = node
	b, _ := json.Marshal(o)
	return b
}

func decode(key string, value []byte, rev int64) (*cacher.Object, error) {
	var o testObj
	if err := json.Unmarshal(value, &o); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	o.Metadata.ResourceVersion = strconv.FormatInt(rev, 10)
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	return &cacher.Object{Key: key, Namespace: o.Metadata.Namespace, Name: o.Metadata.Name, Rev: rev, JSON: b,
		Labels: o.Metadata.Labels,
		Fields: map[string]string{"metadata.name": o.Metadata.Name, "metadata.namespace": o.Metadata.Namespace, "spec.nodeName": o.Spec.NodeName},
		Value:  &o}, nil
}

func bookmark(rev int64) []byte {
	return fmt.Appendf(nil, `{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"%d"}}`, rev)
}

type env struct {
	t     testing.TB
	store *storage.Store
	cli   *clientv3.Client
	c     *cacher.Cacher
	cfg   cacher.Config
}

// newEnv starts etcd and a running, ready cacher on "pods/".
func newEnv(t testing.TB, mutate ...func(*cacher.Config)) *env {
	t.Helper()
	b := etcdtest.Start(t)
	e := &env{t: t, store: storage.New(b.Client(), "/registry"), cli: b.Client()}
	e.cfg = cacher.Config{Prefix: "pods/", Decode: decode, Bookmark: bookmark, ConsistentReadTimeout: time.Second, Logger: etcdtest.Logger()}
	for _, m := range mutate {
		m(&e.cfg)
	}
	e.c = e.start()
	return e
}

// start runs another cacher with the env's config.
func (e *env) start() *cacher.Cacher {
	e.t.Helper()
	cfg := e.cfg
	cfg.Store = e.store
	c := cacher.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil {
			e.t.Errorf("Run: %v", err)
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) create(ns, name, node string, labels map[string]string) int64 {
	e.t.Helper()
	rev, err := e.store.Create(context.Background(), key(ns, name), obj(ns, name, node, labels))
	if err != nil {
		e.t.Fatal(err)
	}
	return rev
}

func (e *env) update(ns, name, node string, labels map[string]string) int64 {
	e.t.Helper()
	rev, err := e.store.Update(context.Background(), key(ns, name), obj(ns, name, node, labels), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return rev
}

func (e *env) delete(ns, name string) int64 {
	e.t.Helper()
	_, rev, err := e.store.Delete(context.Background(), key(ns, name), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return rev
}

func key(ns, name string) string { return "pods/" + ns + "/" + name }

// wevent is a decoded watch line.
type wevent struct {
	Type   string
	Object struct {
		Kind     string `json:"kind"`
		Code     int    `json:"code"`
		Reason   string `json:"reason"`
		Message  string `json:"message"`
		Metadata struct {
			Name            string            `json:"name"`
			Namespace       string            `json:"namespace"`
			ResourceVersion string            `json:"resourceVersion"`
			Labels          map[string]string `json:"labels"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
}

func (w wevent) rv() int64 {
	rv, _ := strconv.ParseInt(w.Object.Metadata.ResourceVersion, 10, 64)
	return rv
}

func (w wevent) String() string {
	if w.Type == "ERROR" {
		return fmt.Sprintf("ERROR %d %s", w.Object.Code, w.Object.Message)
	}
	return fmt.Sprintf("%s %s/%s@%s", w.Type, w.Object.Metadata.Namespace, w.Object.Metadata.Name, w.Object.Metadata.ResourceVersion)
}

func parseLine(t testing.TB, line []byte) wevent {
	t.Helper()
	if len(line) == 0 || line[len(line)-1] != '\n' {
		t.Fatalf("line not newline-terminated: %q", line)
	}
	var ev wevent
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatalf("bad line %q: %v", line, err)
	}
	return ev
}

// next returns the next event of w, skipping bookmarks unless asked.
func next(t testing.TB, w *cacher.Watcher, bookmarks bool) wevent {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case line, ok := <-w.Events():
			if !ok {
				t.Fatal("watch closed")
			}
			ev := parseLine(t, line)
			if ev.Type == "BOOKMARK" && !bookmarks {
				continue
			}
			return ev
		case <-timeout:
			t.Fatal("no watch event within 5s")
		}
	}
}

// expectNone fails if w yields a non-bookmark event within d.
func expectNone(t testing.TB, w *cacher.Watcher, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case line, ok := <-w.Events():
			if !ok {
				t.Fatal("watch closed")
			}
			if ev := parseLine(t, line); ev.Type != "BOOKMARK" {
				t.Fatalf("unexpected event %v", ev)
			}
		case <-timeout:
			return
		}
	}
}

// expectClosed waits for w's channel to close, ignoring what is left in it.
func expectClosed(t testing.TB, w *cacher.Watcher) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-w.Events():
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("watch not closed within 5s")
		}
	}
}

func watch(t testing.TB, c *cacher.Cacher, opts cacher.WatchOptions) *cacher.Watcher {
	t.Helper()
	w, err := c.Watch(context.Background(), opts)
	if err != nil {
		t.Fatalf("Watch(%+v): %v", opts, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func labelIs(k, v string) func(map[string]string) bool {
	return func(l map[string]string) bool { return l[k] == v }
}

func ptr[T any](v T) *T { return &v }
