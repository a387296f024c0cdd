package resource

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/minik8s/minik8s/internal/client"
)

// discoveryServer serves a discovery with one custom group, example.com
// (v1 preferred, v1beta1 too), and counts the requests for /apis.
func discoveryServer(t *testing.T, reads *atomic.Int32) *client.Client {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/apis", func(w http.ResponseWriter, _ *http.Request) {
		reads.Add(1)
		w.Write([]byte(`{"kind":"APIGroupList","groups":[{"name":"example.com","versions":[{"groupVersion":"example.com/v1","version":"v1"},{"groupVersion":"example.com/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}},
			{"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}}]}`))
	})
	mux.HandleFunc("/api/v1", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","categories":["all"]}]}`))
	})
	mux.HandleFunc("/apis/example.com/v1", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"example.com/v1","resources":[
			{"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget","shortNames":["wd"],"categories":["all"]},
			{"name":"widgets/scale","singularName":"","namespaced":true,"kind":"Scale"}]}`))
	})
	mux.HandleFunc("/apis/example.com/v1beta1", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"example.com/v1beta1","resources":[{"name":"gizmos","singularName":"gizmo","namespaced":false,"kind":"Gizmo"}]}`))
	})
	// metrics.k8s.io's server is down: discovery goes on without it.
	mux.HandleFunc("/apis/metrics.k8s.io/v1beta1", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"kind":"Status","status":"Failure","code":503,"reason":"ServiceUnavailable"}`, http.StatusServiceUnavailable)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	c, err := client.New(&client.Config{Host: s.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMapper(t *testing.T) {
	t.Parallel()
	var reads atomic.Int32
	m := NewMapper(context.Background(), discoveryServer(t, &reads))
	// Built-in names and kinds never read discovery.
	if info, ok := m.Find("po"); !ok || info.Resource != "pods" {
		t.Errorf("Find(po) = %+v, %v", info, ok)
	}
	if _, ok := m.FindKind("apps/v1", "Deployment"); !ok {
		t.Error("FindKind(apps/v1 Deployment) not found")
	}
	if n := reads.Load(); n != 0 {
		t.Fatalf("built-in lookups read discovery %d times", n)
	}
	for _, name := range []string{"widgets", "widget", "wd", "Widget", "widgets.example.com"} {
		info, ok := m.Find(name)
		if !ok || info.Resource != "widgets" || info.Version != "v1" || !info.Namespaced || !info.HasSubresource("scale") {
			t.Errorf("Find(%s) = %+v, %v", name, info, ok)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("discovery read %d times for custom names, want once", n)
	}
	// A kind of a version that is not preferred resolves; a name of it
	// does not.
	if info, ok := m.FindKind("example.com/v1beta1", "Gizmo"); !ok || info.Resource != "gizmos" || info.Namespaced {
		t.Errorf("FindKind(example.com/v1beta1 Gizmo) = %+v, %v", info, ok)
	}
	// A miss reads discovery once more, then never again.
	for _, name := range []string{"gizmos", "frobs", "widgets.other.com"} {
		if _, ok := m.Find(name); ok {
			t.Errorf("Find(%s) found", name)
		}
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("discovery read %d times after misses, want 2", n)
	}
	all, err := m.Resolve("all")
	if err != nil || len(all) != 2 || all[0].Resource != "pods" || all[1].Resource != "widgets" {
		t.Errorf(`Resolve("all") = %+v, %v`, all, err)
	}
	if _, err := m.Resolve("frobs"); err == nil || err.Error() != `the server doesn't have a resource type "frobs"` {
		t.Errorf("Resolve(frobs) error %v", err)
	}
}
