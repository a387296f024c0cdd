package disruption

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// TestSync computes budgets over a Deployment's pods (scale 4, read
// through its ReplicaSet) and checks the status written.
func TestSync(t *testing.T) {
	yes := true
	four, three := int32(4), int32(3)
	deploy := &api.Deployment{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "d", UID: "d-uid"}, Spec: api.DeploymentSpec{Replicas: &four}}
	rs := &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "d-1", UID: "rs-uid",
		OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "d-uid", Controller: &yes}}},
		Spec: api.ReplicaSetSpec{Replicas: &three}} // mid-rollout: the Deployment's scale counts
	pod := func(name string, ready bool, owned bool) *api.Pod {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "d"}},
			Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "i"}}}}
		if owned {
			p.OwnerReferences = []api.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "d-1", UID: "rs-uid", Controller: &yes}}
		}
		st := api.ConditionFalse
		if ready {
			st = api.ConditionTrue
		}
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionStatus(st)}}
		return p
	}
	pct := func(s string) *api.IntOrString { v := api.FromString(s); return &v }
	num := func(i int32) *api.IntOrString { v := api.FromInt(i); return &v }
	tests := []struct {
		name                                string
		spec                                api.PodDisruptionBudgetSpec
		pods                                []*api.Pod
		healthy, desired, expected, allowed int32
		reason                              string
	}{
		{name: "minAvailable int counts the pods", spec: api.PodDisruptionBudgetSpec{MinAvailable: num(2)},
			pods: []*api.Pod{pod("a", true, true), pod("b", true, true), pod("c", false, true)}, healthy: 2, desired: 2, expected: 3, allowed: 0, reason: "InsufficientPods"},
		{name: "minAvailable percent of the deployment's scale", spec: api.PodDisruptionBudgetSpec{MinAvailable: pct("50%")},
			pods: []*api.Pod{pod("a", true, true), pod("b", true, true), pod("c", true, true)}, healthy: 3, desired: 2, expected: 4, allowed: 1, reason: "SufficientPods"},
		{name: "maxUnavailable percent rounds up", spec: api.PodDisruptionBudgetSpec{MaxUnavailable: pct("30%")},
			pods: []*api.Pod{pod("a", true, true), pod("b", true, true), pod("c", true, true), pod("d", true, true)}, healthy: 4, desired: 2, expected: 4, allowed: 2, reason: "SufficientPods"},
		{name: "a pod without controller fails safe", spec: api.PodDisruptionBudgetSpec{MaxUnavailable: num(1)},
			pods: []*api.Pod{pod("a", true, true), pod("b", true, false)}, allowed: 0, reason: "SyncFailed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"app": "d"}}
			pdb := &api.PodDisruptionBudget{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p", Generation: 1}, Spec: tt.spec}
			// The fake server assigns UIDs: chain the owner references
			// through the ones it gave.
			srv := clienttest.NewServer(t, pdb, deploy)
			var d api.Deployment
			srv.Object(client.Resource[api.Deployment](nil).Info(), "ns", "d", &d)
			r := api.DeepCopy(rs)
			r.OwnerReferences[0].UID = d.UID
			if err := srv.Add(r); err != nil {
				t.Fatal(err)
			}
			srv.Object(client.Resource[api.ReplicaSet](nil).Info(), "ns", "d-1", r)
			for _, p := range tt.pods {
				p = api.DeepCopy(p)
				if len(p.OwnerReferences) > 0 {
					p.OwnerReferences[0].UID = r.UID
				}
				if err := srv.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
			c := NewController(srv.Client(),
				informer.Shared[api.PodDisruptionBudget](f, "", client.ListOptions{}), informer.Shared[api.Pod](f, "", client.ListOptions{}),
				informer.Shared[api.ReplicaSet](f, "", client.ListOptions{}), informer.Shared[api.Deployment](f, "", client.ListOptions{}),
				informer.Shared[api.StatefulSet](f, "", client.ListOptions{}), informer.Shared[api.ReplicationController](f, "", client.ListOptions{}),
				&events.FakeRecorder{}, slog.New(slog.DiscardHandler))
			f.Start(ctx)
			f.WaitForCacheSync(ctx)
			if err := c.sync(ctx, "ns/p"); err != nil {
				t.Fatal(err)
			}
			var got api.PodDisruptionBudget
			srv.Object(client.Resource[api.PodDisruptionBudget](nil).Info(), "ns", "p", &got)
			s := got.Status
			if s.CurrentHealthy != tt.healthy || s.DesiredHealthy != tt.desired || s.ExpectedPods != tt.expected || s.DisruptionsAllowed != tt.allowed ||
				s.ObservedGeneration != 1 || len(s.Conditions) != 1 || s.Conditions[0].Reason != tt.reason {
				t.Fatalf("status %+v", s)
			}
		})
	}
}
