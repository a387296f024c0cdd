package controller

import (
	"slices"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/informer"
)

// TestOnOwned drives kube's owned-object rules with a pod per event and
// compares the owner keys queued and the expectations' observations.
func TestOnOwned(t *testing.T) {
	t.Parallel()
	rs := func(name, uid, app string) *api.ReplicaSet {
		return &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: api.UID(uid)},
			Spec: api.ReplicaSetSpec{Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
	pod := func(rv, app string, owner *api.ReplicaSet, terminating bool) *api.Pod {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: rv, Labels: map[string]string{"app": app}}}
		if owner != nil {
			p.OwnerReferences = []api.OwnerReference{NewControllerRef(&owner.ObjectMeta, "apps/v1", "ReplicaSet")}
		}
		if terminating {
			p.DeletionTimestamp = new(api.Time)
		}
		return p
	}
	web, api2, all := rs("web", "u1", "web"), rs("api", "u2", "api"), rs("all", "u3", "")
	gone := rs("gone", "u9", "web") // referenced, not in the cache
	cases := []struct {
		name    string
		event   func(h informer.Handler[api.Pod])
		want    []string
		created []string
		deleted []string
	}{
		{"add controlled", func(h informer.Handler[api.Pod]) { h.OnAdd(pod("1", "x", web, false), false) },
			[]string{"ns/web"}, []string{"ns/web"}, nil},
		{"add orphan: the owners selecting it, not the empty selector", func(h informer.Handler[api.Pod]) { h.OnAdd(pod("1", "web", nil, false), false) },
			[]string{"ns/web"}, nil, nil},
		{"add terminating is its delete", func(h informer.Handler[api.Pod]) { h.OnAdd(pod("1", "x", web, true), false) },
			[]string{"ns/web"}, nil, []string{"ns/web"}},
		{"add controlled by a gone owner", func(h informer.Handler[api.Pod]) { h.OnAdd(pod("1", "web", gone, false), false) },
			nil, nil, nil},
		{"resync", func(h informer.Handler[api.Pod]) {
			h.OnUpdate(pod("1", "web", nil, false), pod("1", "api", nil, false))
		},
			nil, nil, nil},
		{"controller changed", func(h informer.Handler[api.Pod]) { h.OnUpdate(pod("1", "x", web, false), pod("2", "x", api2, false)) },
			[]string{"ns/api", "ns/web"}, nil, nil},
		{"orphan relabelled", func(h informer.Handler[api.Pod]) {
			h.OnUpdate(pod("1", "web", nil, false), pod("2", "api", nil, false))
		},
			[]string{"ns/api"}, nil, nil},
		{"orphan unchanged labels", func(h informer.Handler[api.Pod]) {
			h.OnUpdate(pod("1", "web", nil, false), pod("2", "web", nil, false))
		},
			nil, nil, nil},
		{"released", func(h informer.Handler[api.Pod]) {
			h.OnUpdate(pod("1", "api", web, false), pod("2", "api", nil, false))
		},
			[]string{"ns/api", "ns/web"}, nil, nil},
		{"became terminating", func(h informer.Handler[api.Pod]) { h.OnUpdate(pod("1", "x", web, false), pod("2", "x", web, true)) },
			[]string{"ns/web"}, nil, []string{"ns/web"}},
		{"delete", func(h informer.Handler[api.Pod]) { h.OnDelete(pod("1", "x", web, false), false) },
			[]string{"ns/web"}, nil, []string{"ns/web"}},
		{"delete orphan", func(h informer.Handler[api.Pod]) { h.OnDelete(pod("1", "web", nil, false), false) },
			nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rss := informer.New[api.ReplicaSet](nil, informer.Options[api.ReplicaSet]{Resource: apierrors.GroupResource{Group: "apps", Resource: "replicasets"}})
			for _, o := range []*api.ReplicaSet{web, api2, all} {
				rss.Store().Add(o)
			}
			l := NewLoop(LoopConfig[string]{})
			defer l.Queue.ShutDown()
			var created, deleted []string
			h := OnOwned(l, NewOwners(rss, "apps/v1", "ReplicaSet", func(rs *api.ReplicaSet) *api.LabelSelector { return rs.Spec.Selector }),
				OwnedEvents[api.Pod, api.ReplicaSet]{
					Created:              func(key string, _ *api.Pod) { created = append(created, key) },
					Deleted:              func(key string, _ *api.Pod) { deleted = append(deleted, key) },
					TerminatingIsDeleted: true,
				})
			tc.event(h)
			var got []string
			for l.Queue.Len() > 0 {
				k, _ := l.Queue.Get()
				got = append(got, k)
				l.Queue.Done(k)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || !slices.Equal(created, tc.created) || !slices.Equal(deleted, tc.deleted) {
				t.Errorf("queued %v, created %v, deleted %v; want %v, %v, %v", got, created, deleted, tc.want, tc.created, tc.deleted)
			}
		})
	}
}
