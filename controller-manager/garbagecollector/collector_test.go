package garbagecollector

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
)

func ptr[T any](v T) *T { return &v }

func rs(name string, finalizers ...string) *api.ReplicaSet {
	r := &api.ReplicaSet{TypeMeta: api.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: api.UID("uid-" + name), Finalizers: finalizers}}
	if len(finalizers) > 0 {
		now := api.Now()
		r.DeletionTimestamp = &now
	}
	return r
}

func ref(owner string, block bool) api.OwnerReference {
	return api.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: api.UID("uid-" + owner),
		Controller: ptr(true), BlockOwnerDeletion: ptr(block)}
}

func pod(name string, refs ...api.OwnerReference) *api.Pod {
	return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: api.UID("uid-" + name), OwnerReferences: refs},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "i"}}}}
}

// newTestCollector seeds the owners, then the pods with their references
// pointing at the owners' server-assigned uids (owners not seeded keep the
// made-up "uid-NAME"), and fills the collector's graph.
func newTestCollector(t *testing.T, owners []*api.ReplicaSet, pods []*api.Pod) (*Collector, *clienttest.Server) {
	t.Helper()
	srv := clienttest.NewServer(t)
	uids := map[api.UID]api.UID{}
	for _, o := range owners {
		if err := srv.Add(o); err != nil {
			t.Fatal(err)
		}
		var got api.ReplicaSet
		srv.Object(rsInfo(), "ns", o.Name, &got)
		if o.Name == "recreated" {
			continue // a different object under the name the pod refers to
		}
		uids[api.UID("uid-"+o.Name)] = got.UID
	}
	for _, p := range pods {
		p = api.DeepCopy(p)
		for i, r := range p.OwnerReferences {
			if u, ok := uids[r.UID]; ok {
				p.OwnerReferences[i].UID = u
			}
		}
		if err := srv.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	var res []api.ResourceInfo
	res = append(res, podInfo(), rsInfo())
	gc := NewCollector(srv.Client(), res, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	if !gc.startInformers(ctx) {
		t.Fatal("informers did not sync")
	}
	// Handlers run after HasSynced: wait until the graph holds everything.
	for gc.graphLen() < len(owners)+len(pods) {
		if ctx.Err() != nil {
			t.Fatal("graph not filled")
		}
		time.Sleep(time.Millisecond)
	}
	srv.ClearActions()
	return gc, srv
}

func (gc *Collector) graphLen() int {
	gc.graph.mu.RLock()
	defer gc.graph.mu.RUnlock()
	return len(gc.graph.nodes)
}

// uidOf finds an object's uid in the graph by name.
func (gc *Collector) uidOf(name string) api.UID {
	gc.graph.mu.RLock()
	defer gc.graph.mu.RUnlock()
	for uid, n := range gc.graph.nodes {
		if n.name == name {
			return uid
		}
	}
	return ""
}

func writes(srv *clienttest.Server) []string {
	var out []string
	for _, a := range srv.Actions() {
		if a.Verb != "watch" && a.Verb != "list" {
			out = append(out, a.String())
		}
	}
	return out
}

func TestSync(t *testing.T) {
	tests := []struct {
		name       string
		owners     []*api.ReplicaSet
		pods       []*api.Pod
		sync       string
		wantWrites []string
		check      func(t *testing.T, srv *clienttest.Server)
	}{
		{name: "owner present", owners: []*api.ReplicaSet{rs("a")}, pods: []*api.Pod{pod("p", ref("a", true))}, sync: "p"},
		{name: "owner gone: dependent deleted", pods: []*api.Pod{pod("p", ref("a", true))}, sync: "p",
			wantWrites: []string{"get replicasets.apps ns/a", "delete pods ns/p"}},
		{name: "owner recreated with another uid", owners: []*api.ReplicaSet{rs("recreated")}, pods: []*api.Pod{pod("p", ref("recreated", true))},
			sync: "p", wantWrites: []string{"get replicasets.apps ns/recreated", "delete pods ns/p"}},
		{name: "one of two owners gone: reference dropped", owners: []*api.ReplicaSet{rs("b")}, pods: []*api.Pod{pod("p", ref("a", true), ref("b", false))},
			sync: "p", wantWrites: []string{"get replicasets.apps ns/a", "get pods ns/p", "update pods ns/p"},
			check: func(t *testing.T, srv *clienttest.Server) {
				var p api.Pod
				srv.Object(podInfo(), "ns", "p", &p)
				if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Name != "b" {
					t.Fatalf("ownerReferences = %+v, want only b", p.OwnerReferences)
				}
			}},
		{name: "foreground owner waits for blocking dependents", owners: []*api.ReplicaSet{rs("a", api.FinalizerDeleteDependents)}, pods: []*api.Pod{pod("p", ref("a", true))},
			sync: "a"},
		{name: "dependent of a foreground owner is deleted", owners: []*api.ReplicaSet{rs("a", api.FinalizerDeleteDependents)}, pods: []*api.Pod{pod("p", ref("a", true))},
			sync: "p", wantWrites: []string{"delete pods ns/p"}},
		{name: "foreground owner without blocking dependents loses its finalizer", owners: []*api.ReplicaSet{rs("a", api.FinalizerDeleteDependents)}, pods: []*api.Pod{pod("p", ref("a", false))},
			sync: "a", wantWrites: []string{"get replicasets.apps ns/a", "update replicasets.apps ns/a"}},
		{name: "orphan owner", owners: []*api.ReplicaSet{rs("a", api.FinalizerOrphanDependents)}, pods: []*api.Pod{pod("p", ref("a", true)), pod("q", ref("a", true))},
			sync: "a", check: func(t *testing.T, srv *clienttest.Server) {
				for _, name := range []string{"p", "q"} {
					var p api.Pod
					srv.Object(podInfo(), "ns", name, &p)
					if len(p.OwnerReferences) != 0 {
						t.Fatalf("pod %s still has ownerReferences %+v", name, p.OwnerReferences)
					}
				}
				var r api.ReplicaSet
				if srv.Object(rsInfo(), "ns", "a", &r) && slices.Contains(r.Finalizers, api.FinalizerOrphanDependents) {
					t.Fatalf("orphan finalizer still there: %v", r.Finalizers)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gc, srv := newTestCollector(t, tt.owners, tt.pods)
			if err := gc.sync(context.Background(), gc.uidOf(tt.sync)); err != nil {
				t.Fatal(err)
			}
			got := writes(srv)
			if tt.wantWrites != nil || tt.check == nil {
				if !slices.Equal(got, tt.wantWrites) {
					t.Fatalf("actions = %q, want %q", got, tt.wantWrites)
				}
			}
			if tt.check != nil {
				tt.check(t, srv)
			}
		})
	}
}

func TestGraphDependents(t *testing.T) {
	g := newGraph()
	info := podInfo()
	g.upsert(newNode(info, &pod("p", ref("a", true)).ObjectMeta))
	g.upsert(newNode(info, &pod("q", ref("a", true), ref("b", true)).ObjectMeta))
	if got := len(g.dependentsOf("uid-a")); got != 2 {
		t.Fatalf("dependents of a = %d, want 2", got)
	}
	g.upsert(newNode(info, &pod("q", ref("b", true)).ObjectMeta))
	if got := len(g.dependentsOf("uid-a")); got != 1 {
		t.Fatalf("dependents of a after q dropped it = %d, want 1", got)
	}
	g.remove("uid-p")
	if got := len(g.dependentsOf("uid-a")); got != 0 {
		t.Fatalf("dependents of a after p went = %d, want 0", got)
	}
	if len(g.dependents) != 1 {
		t.Fatalf("dependents index has %d owners, want 1 (b)", len(g.dependents))
	}
}

func podInfo() api.ResourceInfo { return client.Resource[api.Pod](nil).Info() }
func rsInfo() api.ResourceInfo  { return client.Resource[api.ReplicaSet](nil).Info() }

func TestAbsentCache(t *testing.T) {
	a := newAbsentCache(2)
	a.add("x")
	a.add("y")
	a.add("x")
	if !a.has("x") || !a.has("y") {
		t.Fatal("lost an entry within capacity")
	}
	a.add("z")
	if a.has("x") || !a.has("y") || !a.has("z") {
		t.Fatalf("eviction order wrong: x %v y %v z %v", a.has("x"), a.has("y"), a.has("z"))
	}
}
