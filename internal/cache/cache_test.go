package cache

import (
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
)

type testPod struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
	Node           string `json:"node"`
}

func pod(ns, name, node string, lbl map[string]string) *testPod {
	return &testPod{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: lbl}, Node: node}
}

const byNode = "node"

func nodeIndex(p *testPod) []string {
	if p.Node == "" {
		return nil
	}
	return []string{p.Node}
}

func newPodStore() *Store[testPod] {
	return NewStore[testPod](Indexers[testPod]{byNode: nodeIndex})
}

func names(objs []*testPod) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, MetaNamespaceKeyFunc(o))
	}
	sort.Strings(out)
	return out
}

func TestKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key      string
		ns, name string
		wantErr  bool
	}{
		{"default/web", "default", "web", false},
		{"node-1", "", "node-1", false},
		{"", "", "", true},
		{"a/b/c", "", "", true},
		{"/b", "", "", true},
		{"a/", "", "", true},
	}
	for _, tt := range tests {
		ns, name, err := SplitMetaNamespaceKey(tt.key)
		if (err != nil) != tt.wantErr || ns != tt.ns || name != tt.name {
			t.Errorf("SplitMetaNamespaceKey(%q) = %q, %q, %v", tt.key, ns, name, err)
		}
		if !tt.wantErr && MetaNamespaceKey(ns, name) != tt.key {
			t.Errorf("MetaNamespaceKey(%q, %q) != %q", ns, name, tt.key)
		}
	}
	if k := MetaNamespaceKeyFunc(pod("ns", "p", "", nil)); k != "ns/p" {
		t.Errorf("key %q", k)
	}
}

func TestStoreOperations(t *testing.T) {
	t.Parallel()
	s := newPodStore()
	s.Add(pod("a", "p1", "n1", nil))
	s.Add(pod("a", "p2", "n1", nil))
	s.Add(pod("b", "p1", "n2", nil))
	s.Add(pod("b", "p3", "", nil))

	check := func(step string, index, value string, want ...string) {
		t.Helper()
		got, err := s.ByIndex(index, value)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = []string{}
		}
		if !reflect.DeepEqual(names(got), want) {
			t.Errorf("%s: ByIndex(%s=%s) = %v, want %v", step, index, value, names(got), want)
		}
	}
	check("add", byNode, "n1", "a/p1", "a/p2")
	check("add", NamespaceIndex, "b", "b/p1", "b/p3")
	if got := s.ListKeys(); !reflect.DeepEqual(got, []string{"a/p1", "a/p2", "b/p1", "b/p3"}) {
		t.Errorf("ListKeys %v", got)
	}

	// Moving a pod to another node moves it between index values.
	s.Update(pod("a", "p2", "n2", nil))
	check("update", byNode, "n1", "a/p1")
	check("update", byNode, "n2", "a/p2", "b/p1")
	if got := s.IndexValues(byNode); !reflect.DeepEqual(got, []string{"n1", "n2"}) {
		t.Errorf("IndexValues %v", got)
	}

	s.Delete(pod("a", "p1", "", nil))
	check("delete", byNode, "n1")
	if got := s.IndexValues(byNode); !reflect.DeepEqual(got, []string{"n2"}) {
		t.Errorf("IndexValues after delete %v (empty values must be dropped)", got)
	}
	if _, ok := s.GetByKey("a/p1"); ok {
		t.Error("deleted object still there")
	}
	if o, ok := s.Get(pod("b", "p1", "", nil)); !ok || o.Node != "n2" {
		t.Errorf("Get %v %v", o, ok)
	}
	s.DeleteByKey("no/such") // no-op

	s.Replace([]*testPod{pod("c", "x", "n9", nil), pod("c", "y", "", nil)}, "42")
	if got := s.ListKeys(); !reflect.DeepEqual(got, []string{"c/x", "c/y"}) || s.Len() != 2 {
		t.Errorf("after Replace %v", got)
	}
	check("replace", byNode, "n2")
	check("replace", byNode, "n9", "c/x")
	if s.ResourceVersion() != "42" {
		t.Errorf("resourceVersion %q", s.ResourceVersion())
	}
	if keys, _ := s.IndexKeys(NamespaceIndex, "c"); !reflect.DeepEqual(keys, []string{"c/x", "c/y"}) {
		t.Errorf("IndexKeys %v", keys)
	}
	if _, err := s.ByIndex("nope", "x"); err == nil {
		t.Error("unknown index accepted")
	}
}

func TestAddIndexers(t *testing.T) {
	t.Parallel()
	s := NewStore[testPod](nil)
	s.Add(pod("a", "p1", "n1", nil))
	if err := s.AddIndexers(Indexers[testPod]{byNode: nodeIndex}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ByIndex(byNode, "n1"); len(got) != 1 {
		t.Errorf("existing object not indexed: %v", got)
	}
	if err := s.AddIndexers(Indexers[testPod]{byNode: nodeIndex}); err == nil {
		t.Error("duplicate indexer accepted")
	}
	if err := s.AddIndexers(Indexers[testPod]{NamespaceIndex: nodeIndex}); err == nil {
		t.Error("replacing the namespace index accepted")
	}
}

func TestLister(t *testing.T) {
	t.Parallel()
	s := newPodStore()
	s.Add(pod("a", "web-1", "", map[string]string{"app": "web"}))
	s.Add(pod("a", "db-1", "", map[string]string{"app": "db"}))
	s.Add(pod("b", "web-2", "", map[string]string{"app": "web"}))
	l := NewLister(s, apierrors.GroupResource{Resource: "pods"})
	web, err := labels.Parse("app=web")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  []*testPod
		want []string
	}{
		{"all, nil selector", l.List(nil), []string{"a/db-1", "a/web-1", "b/web-2"}},
		{"all, everything", l.List(labels.Everything()), []string{"a/db-1", "a/web-1", "b/web-2"}},
		{"all, app=web", l.List(web), []string{"a/web-1", "b/web-2"}},
		{"namespace a, app=web", l.Namespace("a").List(web), []string{"a/web-1"}},
		{"namespace a, all", l.Namespace("a").List(nil), []string{"a/db-1", "a/web-1"}},
		{"empty namespace", l.Namespace("zz").List(nil), []string{}},
		{"nothing", l.List(labels.Nothing()), []string{}},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(names(tt.got), tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, names(tt.got), tt.want)
		}
	}
	if p, err := l.Namespace("b").Get("web-2"); err != nil || p.Name != "web-2" {
		t.Errorf("Get: %v %v", p, err)
	}
	_, err = l.Namespace("b").Get("web-1")
	if !apierrors.IsNotFound(err) || err.Error() != `pods "web-1" not found` {
		t.Errorf("Get missing: %v", err)
	}
	_, err = l.Get("web-1") // cluster-scoped lookup of a namespaced object
	if !apierrors.IsNotFound(err) {
		t.Errorf("cluster Get: %v", err)
	}
}

func TestConcurrentAccess(t *testing.T) {
	t.Parallel()
	s := newPodStore()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p := pod("ns", fmt.Sprintf("p%d-%d", w, i%20), fmt.Sprintf("n%d", i%3), nil)
				if i%5 == 0 {
					s.Delete(p)
				} else {
					s.Update(p)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, _ = s.ByIndex(byNode, "n1")
				_ = s.List()
				_, _ = s.GetByKey("ns/p0-1")
			}
		}()
	}
	wg.Wait()
	// Every index entry must point at a stored object with that value.
	for _, v := range s.IndexValues(byNode) {
		objs, _ := s.ByIndex(byNode, v)
		for _, o := range objs {
			if o == nil || o.Node != v {
				t.Fatalf("index %s holds %+v", v, o)
			}
		}
	}
	total := 0
	for _, v := range s.IndexValues(byNode) {
		keys, _ := s.IndexKeys(byNode, v)
		total += len(keys)
	}
	if total != s.Len() {
		t.Errorf("index holds %d keys, store %d", total, s.Len())
	}
}
