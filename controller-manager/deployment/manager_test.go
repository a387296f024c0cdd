package deployment_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// Killing the controller-manager in the middle of a rollout and starting a
// new one converges on the same result, without extra pods.
func TestControllerManagerRestartMidRollout(t *testing.T) {
	cl := startCluster(t)
	cl.runKubelet(3, 300*time.Millisecond, 8)
	stop := cl.runControllerManager(cl.cmOptions(true))
	createNamespace(t, cl.c, "restart")
	d := newDeployment("restart", "web", 6, "web:1")
	surge, unavailable := api.FromInt(1), api.FromInt(0)
	d.Spec.Strategy.RollingUpdate = &api.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}
	if _, err := client.Resource[api.Deployment](cl.c).Namespace("restart").Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	cl.waitRolledOut("restart", "web", rolloutTimeout)
	w := cl.watchPods("restart", func(pods map[string]*api.Pod) string {
		live, avail := counts(pods)
		if live > 7 || avail < 6 {
			return fmt.Sprintf("%d live (max 7), %d available (min 6)", live, avail)
		}
		return ""
	})
	cl.updateDeployment("restart", "web", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "web:2" })
	waitFor(t, rolloutTimeout, "rollout under way", func() (bool, error) {
		got, err := client.Resource[api.Deployment](cl.c).Namespace("restart").Get(context.Background(), "web")
		if err != nil {
			return false, err
		}
		return got.Status.UpdatedReplicas >= 2 && got.Status.UpdatedReplicas < 6, nil
	})
	stop()
	// The next instance must wait out the old lease (released on cancel)
	// and start from the apiserver's state alone.
	cl.runControllerManager(cl.cmOptions(true))
	got := cl.waitRolledOut("restart", "web", rolloutTimeout)
	cl.waitLivePods("restart", 6)
	if v, n := w.Violations(); len(v) > 0 {
		t.Errorf("restart broke the rollout bounds (%d events): %v", n, v)
	}
	if got.Annotations[api.RevisionAnnotation] != "2" || len(cl.replicaSets("restart")) != 2 {
		t.Errorf("revision %q, %d replica sets", got.Annotations[api.RevisionAnnotation], len(cl.replicaSets("restart")))
	}
	for _, p := range cl.livePods("restart") {
		if p.Spec.Containers[0].Image != "web:2" {
			t.Errorf("pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
		}
	}
}

// Two controller-managers with leader election: one holds the lease and
// acts; the standby takes over when the leader stops. If both acted at
// once, their ReplicaSet controllers (each blind to the other's in-flight
// creates) would make more pods than desired.
func TestLeaderElectionOneActive(t *testing.T) {
	cl := startCluster(t)
	cl.runKubelet(3, 0, 8)
	createNamespace(t, cl.c, "le")
	leases := client.Resource[api.Lease](cl.c).Namespace("kube-system")
	holder := func() string {
		l, err := leases.Get(context.Background(), "kube-controller-manager")
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	stopFirst := cl.runControllerManager(cl.cmOptions(true))
	waitFor(t, 30*time.Second, "a leader", func() (bool, error) { return holder() != "", nil })
	first := holder()
	cl.runControllerManager(cl.cmOptions(true))

	const replicas = 20
	var bound atomic.Int32 // replicas, then replicas+maxSurge (25%) during the update
	bound.Store(replicas)
	w := cl.watchPods("le", func(pods map[string]*api.Pod) string {
		if live, _ := counts(pods); live > int(bound.Load()) {
			return fmt.Sprintf("%d live pods, more than %d", live, bound.Load())
		}
		return ""
	})
	// The first holder is recorded now: a fast rollout can finish between
	// two polls, so the poller alone might never see it.
	holders := map[string]bool{first: true}
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(100 * time.Millisecond):
				if h := holder(); h != "" {
					holders[h] = true
				}
			}
		}
	}()
	if _, err := client.Resource[api.Deployment](cl.c).Namespace("le").Create(context.Background(), newDeployment("le", "web", replicas, "web:1")); err != nil {
		t.Fatal(err)
	}
	cl.waitRolledOut("le", "web", rolloutTimeout)
	if h := holder(); h != first {
		t.Fatalf("leadership moved from %s to %s without a failure", first, h)
	}
	stopFirst()
	waitFor(t, 30*time.Second, "the standby to take over", func() (bool, error) {
		h := holder()
		return h != "" && h != first, nil
	})
	// The new leader acts: it rolls out a new template.
	bound.Store(replicas + 5)
	cl.updateDeployment("le", "web", func(d *api.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "web:2" })
	got := cl.waitRolledOut("le", "web", rolloutTimeout)
	cl.waitLivePods("le", replicas)
	close(stopWatch)
	<-watched
	if got.Annotations[api.RevisionAnnotation] != "2" {
		t.Errorf("revision = %q", got.Annotations[api.RevisionAnnotation])
	}
	if len(holders) != 2 {
		t.Errorf("lease holders seen: %v, want the two instances one after the other", holders)
	}
	if v, _ := w.Violations(); len(v) > 0 {
		t.Errorf("more pods than desired: %v", v)
	}
}
