package disruption_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

const ns = "pdb"

// TestEvictionSpendsBudget: minAvailable 2 over 3 ready pods of a
// ReplicaSet allows one disruption; the first eviction spends it, the
// second is refused with kube's 429, and once the ReplicaSet's replacement
// is ready the budget allows an eviction again.
func TestEvictionSpendsBudget(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"replicaset", "disruption"}, nil)
	ctx := cl.Context(90 * time.Second)
	cl.Namespace(ns)
	three := int32(3)
	rs := &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: api.ReplicaSetSpec{Replicas: &three, Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}}}
	if _, err := client.Resource[api.ReplicaSet](cl.Client).Namespace(ns).Create(ctx, rs); err != nil {
		t.Fatal(err)
	}
	two := api.FromInt(2)
	pdbs := client.Resource[api.PodDisruptionBudget](cl.Client).Namespace(ns)
	if _, err := pdbs.Create(ctx, &api.PodDisruptionBudget{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: api.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}); err != nil {
		t.Fatal(err)
	}
	// Evictions go through a client that hands 429s back at once, as
	// client-go does without a Retry-After header.
	noRetry, err := client.New(&client.Config{Host: cl.Server.URL(), QPS: -1, MaxRetries: -1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pods := client.Resource[api.Pod](noRetry).Namespace(ns)
	live := func() []api.Pod {
		l, err := pods.List(ctx, client.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		var out []api.Pod
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				out = append(out, p)
			}
		}
		return out
	}
	readyAll := func() {
		for _, p := range live() {
			if p.Status.Phase != api.PodRunning {
				cl.SetPodStatus(ns, p.Name, api.PodRunning, "10.0.0.1", true)
			}
		}
	}
	waitStatus := func(healthy, allowed int32) {
		cl.Eventually(30*time.Second, fmt.Sprintf("pdb healthy %d allowed %d", healthy, allowed), func() (bool, error) {
			p, err := pdbs.Get(ctx, "web")
			if err != nil {
				return false, err
			}
			s := p.Status
			return s.CurrentHealthy == healthy && s.DesiredHealthy == 2 && s.ExpectedPods == 3 && s.DisruptionsAllowed == allowed &&
				s.ObservedGeneration == p.Generation && len(s.Conditions) == 1, fmt.Errorf("status %+v", s)
		})
	}
	evict := func(name string) error {
		return pods.Subresource(name, "eviction").Post(ctx, &api.Eviction{TypeMeta: api.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}}, nil)
	}

	cl.Eventually(30*time.Second, "3 pods", func() (bool, error) { n := len(live()); return n == 3, fmt.Errorf("%d pods", n) })
	readyAll()
	waitStatus(3, 1)
	p, _ := pdbs.Get(ctx, "web")
	if c := p.Status.Conditions[0]; c.Type != "DisruptionAllowed" || c.Status != api.ConditionTrue || c.Reason != "SufficientPods" {
		t.Fatalf("condition %+v", c)
	}

	ps := live()
	if err := evict(ps[0].Name); err != nil {
		t.Fatalf("first eviction: %v", err)
	}
	err = evict(ps[1].Name)
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != http.StatusTooManyRequests || se.ErrStatus.Reason != api.StatusReasonTooManyRequests ||
		se.ErrStatus.Message != "Cannot evict pod as it would violate the pod's disruption budget." {
		t.Fatalf("second eviction: %v", err)
	}
	if d := se.ErrStatus.Details; d == nil || len(d.Causes) != 1 || d.Causes[0].Type != "DisruptionBudget" ||
		d.Causes[0].Message != "The disruption budget web needs 2 healthy pods and has 2 currently" {
		t.Fatalf("second eviction details: %+v", se.ErrStatus.Details)
	}
	p, _ = pdbs.Get(ctx, "web")
	if c := p.Status.Conditions[0]; c.Status != api.ConditionFalse || c.Reason != "InsufficientPods" {
		t.Fatalf("condition after spending: %+v", c)
	}

	// The ReplicaSet replaces the evicted pod; once it is ready the budget
	// allows one disruption again.
	cl.Eventually(30*time.Second, "replacement", func() (bool, error) {
		n := 0
		for _, q := range live() {
			if q.Name != ps[0].Name {
				n++
			}
		}
		return n == 3, fmt.Errorf("%d pods", n)
	})
	readyAll()
	waitStatus(3, 1)
	// Two evictions at once over the one allowed disruption: one wins,
	// the other is refused by the budget (not a 409 of the lost race).
	ps = live()
	errs := make(chan error, 2)
	for _, p := range ps[:2] {
		go func() { errs <- evict(p.Name) }()
	}
	var ok, refused int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case apierrors.IsTooManyRequests(err):
			refused++
		default:
			t.Errorf("concurrent eviction: %v", err)
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("concurrent evictions: %d succeeded, %d refused", ok, refused)
	}
}
