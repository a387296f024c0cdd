package faults_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/internal/informer"
)

// Leader election of the daemons under test: short enough that a killed
// leader's lease expires within seconds, long enough that a busy machine
// does not make a live leader miss its renewals.
var leaseFlags = []string{"--leader-elect=true", "--leader-elect-lease-duration", "4s",
	"--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "250ms"}

// startControllerManager runs the controller-manager binary against url
// with only the replicaset and deployment controllers, the shipped client
// QPS, no HTTP port, and leaseFlags.
func startControllerManager(t *testing.T, bin, url string) *daemontest.Process {
	t.Helper()
	args := append([]string{"--master", url, "--controllers", "replicaset,deployment", "--secure-port", "0", "--log-level", "info"}, leaseFlags...)
	return daemontest.Start(t, bin, args...)
}

// leaseHolder reads the holder of kube-system/NAME ("" when none).
func leaseHolder(ctx context.Context, c *client.Client, name string) string {
	l, err := client.Resource[api.Lease](c).Namespace("kube-system").Get(ctx, name)
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// rolloutBounds replays the pod events of a namespace in order and keeps
// the extremes of the rollout's two invariants over every state the
// apiserver went through: live (not terminating) pods, and available
// (Ready, live) ones.
type rolloutBounds struct {
	mu                 sync.Mutex
	pods               map[string]*api.Pod
	events             int
	maxLive, maxAll    int
	minAvailable       int
	maxLiveAt, minAvAt string // the event that set the extreme
}

func watchRollout(ctx context.Context, t *testing.T, c *client.Client, ns string) *rolloutBounds {
	t.Helper()
	b := &rolloutBounds{pods: map[string]*api.Pod{}, minAvailable: -1}
	inf := informer.New[api.Pod](informer.For[api.Pod](c, ns, client.ListOptions{}), informer.Options[api.Pod]{Logger: apiservertest.Logger()})
	step := func(what string, name string, p *api.Pod, initial bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if p == nil {
			delete(b.pods, name)
		} else {
			b.pods[name] = p
		}
		if initial {
			return // the state is whole only after the first list
		}
		b.events++
		live, available := 0, 0
		for _, p := range b.pods {
			if p.DeletionTimestamp != nil {
				continue
			}
			live++
			if podReady(p) {
				available++
			}
		}
		at := fmt.Sprintf("event %d (%s %s): %d live, %d available", b.events, what, name, live, available)
		if live > b.maxLive {
			b.maxLive, b.maxLiveAt = live, at
		}
		b.maxAll = max(b.maxAll, len(b.pods))
		if b.minAvailable < 0 || available < b.minAvailable {
			b.minAvailable, b.minAvAt = available, at
		}
	}
	inf.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, initial bool) { step("ADDED", p.Name, p, initial) },
		OnUpdate: func(_, p *api.Pod) { step("MODIFIED", p.Name, p, false) },
		OnDelete: func(p *api.Pod, _ bool) { step("DELETED", p.Name, nil, false) },
	})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(ctx, t, 20*time.Millisecond, "pod watch synced", func() (bool, error) { return inf.HasSynced(), nil })
	return b
}

func podReady(p *api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// rolledOut reports whether d finished rolling out its latest template,
// as kubectl rollout status decides.
func rolledOut(d *api.Deployment) bool {
	if d.Status.ObservedGeneration < d.Generation || d.Spec.Replicas == nil {
		return false
	}
	r := *d.Spec.Replicas
	return d.Status.UpdatedReplicas == r && d.Status.Replicas == r && d.Status.AvailableReplicas == r
}

// TestControllerManagerKill9MidRollout SIGKILLs the controller-manager
// three times in the middle of a Deployment's rolling update (20 replicas,
// maxSurge and maxUnavailable 25%, pods Ready a second after they are
// bound) and starts a new one each time. The new process waits out the
// dead one's lease, takes over from the apiserver's state alone and
// finishes the rollout; over every pod event of the update, live pods never
// exceed replicas+maxSurge (25) and available ones never drop below
// replicas-maxUnavailable (15).
func TestControllerManagerKill9MidRollout(t *testing.T) {
	const (
		ns       = "rollout"
		replicas = 20
		maxLive  = 25 // replicas + 25% surge
		minAvail = 15 // replicas - 25% unavailable
	)
	// Where the kills land: once the deployment's status reports this many
	// updated replicas (of the new ReplicaSet), the rollout not yet done.
	// The first lands right after the template changed, while the
	// controller is creating the new ReplicaSet: its successor must adopt
	// that one, not make a second.
	killAt := []struct {
		name    string
		updated int32
	}{
		{"new template accepted", 0},
		{"first surge", 5},
		{"most pods updated", 12},
	}

	bin, ctx := setUp(t, "controller-manager", 4*time.Minute)
	srv := apiservertest.Start(t)
	c := newClient(t, srv.URL())
	controllermanagertest.RunKubelet(t, c, controllermanagertest.KubeletOptions{Nodes: 4, ReadyDelay: time.Second})
	createNamespace(ctx, t, c, ns)
	deployments := client.Resource[api.Deployment](c).Namespace(ns)

	cm := startControllerManager(t, bin, srv.URL())
	eventually(ctx, t, 20*time.Millisecond, "a controller-manager leader", func() (bool, error) {
		return leaseHolder(ctx, c, "kube-controller-manager") != "", nil
	})
	lbl := map[string]string{"app": "web"}
	n := int32(replicas)
	surge, unavailable := api.FromString("25%"), api.FromString("25%")
	d := &api.Deployment{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: api.DeploymentSpec{
			Replicas: &n,
			Selector: &api.LabelSelector{MatchLabels: lbl},
			Strategy: api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "web", Image: "web:1"}}},
			},
		},
	}
	if _, err := deployments.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	getDeployment := func() (*api.Deployment, error) { return deployments.Get(ctx, "web") }
	eventually(ctx, t, 50*time.Millisecond, "the first rollout", func() (bool, error) {
		d, err := getDeployment()
		return err == nil && rolledOut(d), err
	})

	bounds := watchRollout(ctx, t, c, ns)
	for attempt := 0; ; attempt++ {
		d, err := getDeployment()
		if err != nil {
			t.Fatal(err)
		}
		d.Spec.Template.Spec.Containers[0].Image = "web:2"
		if _, err = deployments.Update(ctx, d); err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt > 10 {
			t.Fatalf("update the deployment: %v", err)
		}
	}

	var lastKill time.Time
	for i, at := range killAt {
		var progress string
		eventually(ctx, t, 10*time.Millisecond, fmt.Sprintf("%s, before kill %d", at.name, i+1), func() (bool, error) {
			d, err := getDeployment()
			if err != nil {
				return false, err
			}
			if d.Generation == d.Status.ObservedGeneration && rolledOut(d) {
				t.Fatalf("the rollout finished before kill %d (%s): nothing left to interrupt", i+1, at.name)
			}
			progress = fmt.Sprintf("%d updated, %d ready of %d pods", d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.Replicas)
			if d.Status.ObservedGeneration < d.Generation {
				progress = "the new template not yet observed"
			}
			return at.updated == 0 || d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas >= at.updated, nil
		})
		exitedEarly(t, cm, "controller-manager")
		leader := leaseHolder(ctx, c, "kube-controller-manager")
		lastKill = cm.Kill9(t)
		cm = startControllerManager(t, bin, srv.URL())
		eventually(ctx, t, 20*time.Millisecond, fmt.Sprintf("a new leader after kill %d", i+1), func() (bool, error) {
			exitedEarly(t, cm, "controller-manager")
			h := leaseHolder(ctx, c, "kube-controller-manager")
			return h != "" && h != leader, nil
		})
		t.Logf("kill %d (%s) at %s: the new controller-manager took the lease over %v after SIGKILL",
			i+1, at.name, progress, time.Since(lastKill).Round(time.Millisecond))
	}

	var final *api.Deployment
	eventually(ctx, t, 20*time.Millisecond, "the rollout to finish after the last kill", func() (bool, error) {
		exitedEarly(t, cm, "controller-manager")
		d, err := getDeployment()
		if err != nil {
			return false, err
		}
		final = d
		return rolledOut(d), fmt.Errorf("status %+v", d.Status)
	})
	converged := time.Since(lastKill)

	// The end state: two ReplicaSets, the new one holding every pod.
	rsl, err := client.Resource[api.ReplicaSet](c).Namespace(ns).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var newRS *api.ReplicaSet
	for i := range rsl.Items {
		rs := &rsl.Items[i]
		switch rs.Annotations[api.RevisionAnnotation] {
		case "2":
			newRS = rs
		default:
			if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 0 {
				t.Errorf("old ReplicaSet %s (revision %s) still wants %v replicas", rs.Name, rs.Annotations[api.RevisionAnnotation], rs.Spec.Replicas)
			}
		}
	}
	if len(rsl.Items) != 2 || newRS == nil {
		t.Fatalf("%d ReplicaSets, new one %v; want the old and one new", len(rsl.Items), newRS != nil)
	}
	if final.Annotations[api.RevisionAnnotation] != "2" {
		t.Errorf("deployment at revision %q, want 2", final.Annotations[api.RevisionAnnotation])
	}
	hash := newRS.Labels[api.DefaultDeploymentUniqueLabelKey]
	var pods []api.Pod
	eventually(ctx, t, 20*time.Millisecond, "only the new ReplicaSet's pods left", func() (bool, error) {
		l, err := client.Resource[api.Pod](c).Namespace(ns).List(ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		pods = l.Items
		return len(pods) == replicas, fmt.Errorf("%d pods", len(pods))
	})
	for _, p := range pods {
		if p.Labels[api.DefaultDeploymentUniqueLabelKey] != hash || p.Spec.Containers[0].Image != "web:2" || p.DeletionTimestamp != nil {
			t.Errorf("pod %s: template hash %s, image %s, terminating %v; want the new ReplicaSet's (%s)",
				p.Name, p.Labels[api.DefaultDeploymentUniqueLabelKey], p.Spec.Containers[0].Image, p.DeletionTimestamp != nil, hash)
		}
	}

	bounds.mu.Lock()
	defer bounds.mu.Unlock()
	if bounds.maxLive > maxLive {
		t.Errorf("%d live pods at %s; maxSurge allows %d", bounds.maxLive, bounds.maxLiveAt, maxLive)
	}
	if bounds.minAvailable < minAvail {
		t.Errorf("%d available pods at %s; maxUnavailable allows %d", bounds.minAvailable, bounds.minAvAt, minAvail)
	}
	if bounds.events < 2*replicas {
		t.Errorf("only %d pod events during the rollout", bounds.events)
	}
	t.Logf("rollout finished %v after the last SIGKILL; over %d pod events: at most %d live pods (bound %d, %d counting terminating ones), at least %d available (bound %d)",
		converged.Round(time.Millisecond), bounds.events, bounds.maxLive, maxLive, bounds.maxAll, bounds.minAvailable, minAvail)
}
