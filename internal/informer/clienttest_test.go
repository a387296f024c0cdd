package informer

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
)

// TestAgainstFakeAPIServer runs an informer against the in-memory apiserver
// while objects are created, changed and deleted through the client.
func TestAgainstFakeAPIServer(t *testing.T) {
	t.Parallel()
	srv := clienttest.NewServer(t, &api.Lease{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "seed", Labels: map[string]string{"app": "x"}}})
	c := srv.Client()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := NewFactory(c, FactoryOptions{Logger: quiet})
	inf := Shared[api.Lease](f, "ns", client.ListOptions{LabelSelector: "app=x"})
	var rec recorder
	inf.AddEventHandler(rec.handler())
	f.Start(ctx)
	if !f.WaitForCacheSync(ctx) {
		t.Fatal("not synced")
	}
	leases := client.Resource[api.Lease](c).Namespace("ns")
	mk := func(name string, lbl map[string]string) {
		if _, err := leases.Create(ctx, &api.Lease{ObjectMeta: api.ObjectMeta{Name: name, Labels: lbl}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("a", map[string]string{"app": "x"})
	mk("other", map[string]string{"app": "y"}) // outside the selector
	if _, err := leases.Patch(ctx, "a", client.MergePatchType, []byte(`{"metadata":{"annotations":{"k":"v"}}}`)); err != nil {
		t.Fatal(err)
	}
	if err := leases.Delete(ctx, "seed", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "events", func() bool { return len(rec.get()) >= 4 })
	// Calls look like "add a@12 initial=false": keep the verb and name.
	var got []string
	for _, call := range rec.get() {
		head, _, _ := strings.Cut(call, "@")
		got = append(got, head)
	}
	if want := []string{"add seed", "add a", "update a", "delete seed"}; !reflect.DeepEqual(got, want) {
		t.Errorf("handler calls %q", rec.get())
	}
	sel, _ := labels.Parse("app=x")
	if items := inf.Lister().Namespace("ns").List(sel); len(items) != 1 || items[0].Name != "a" || items[0].Annotations["k"] != "v" {
		t.Errorf("cache %v", items)
	}
}
