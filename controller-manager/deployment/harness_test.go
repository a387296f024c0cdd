package deployment_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	apiserverapp "github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// brokenImage marks pods the simulated kubelet runs but never reports
// ready (a crash-looping release).
const brokenImage = "registry.local/broken:1"

// cluster is a real apiserver plus the pieces a test runs against it: the
// controller-manager (app.Run, in-process) and a simulated kubelet.
type cluster struct {
	t   testing.TB
	srv *apiservertest.Server
	c   *client.Client
}

func startCluster(t testing.TB, mutate ...func(*apiserverapp.Options)) *cluster {
	t.Helper()
	t.Setenv("KUBECONFIG", "")
	srv := apiservertest.Start(t, mutate...)
	c, err := client.New(&client.Config{Host: srv.URL(), QPS: -1, Timeout: 30 * time.Second, UserAgent: "deployment-test"})
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{t: t, srv: srv, c: c}
}

func testLogger() *slog.Logger { return apiservertest.Logger() }

// cmOptions are controller-manager options for tests: only the replicaset
// and deployment controllers, no HTTP server, an unthrottled client.
func (cl *cluster) cmOptions(leaderElect bool) app.Options {
	o := app.DefaultOptions()
	o.Client.Master = cl.srv.URL()
	o.Client.QPS, o.Client.Burst = 1000, 2000
	o.Controllers = []string{"replicaset", "deployment"}
	o.Serving.SecurePort = 0
	o.LeaderElection.LeaderElect = leaderElect
	o.LeaderElection.LeaseDuration = 5 * time.Second
	o.LeaderElection.RenewDeadline = 4 * time.Second
	o.LeaderElection.RetryPeriod = 500 * time.Millisecond
	return o
}

// runControllerManager runs app.Run until the returned stop is called;
// stop waits for it to return.
func (cl *cluster) runControllerManager(opts app.Options) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, opts, testLogger()) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					cl.t.Logf("controller-manager returned: %v", err)
				}
			case <-time.After(30 * time.Second):
				cl.t.Errorf("controller-manager did not stop")
			}
		})
	}
	cl.t.Cleanup(stop)
	return stop
}

// runKubelet simulates nodes: it binds unscheduled pods round-robin to
// fake nodes, reports bound pods Running and Ready after readyDelay (pods
// of brokenImage stay not ready), and finishes graceful deletions at once.
func (cl *cluster) runKubelet(nodes int, readyDelay time.Duration, workers int) {
	controllermanagertest.RunKubelet(cl.t, cl.c, controllermanagertest.KubeletOptions{
		Nodes: nodes, ReadyDelay: readyDelay, Workers: workers,
		Unready: func(p *api.Pod) bool {
			return slices.ContainsFunc(p.Spec.Containers, func(c api.Container) bool { return c.Image == brokenImage })
		},
	})
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, lastErr)
}

func ptr[T any](v T) *T { return &v }

func createNamespace(t testing.TB, c *client.Client, name string) {
	t.Helper()
	if _, err := client.Resource[api.Namespace](c).Create(context.Background(), &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func newDeployment(ns, name string, replicas int32, image string) *api.Deployment {
	lbl := map[string]string{"app": name}
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: api.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &api.LabelSelector{MatchLabels: lbl},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "app", Image: image}}},
			},
		},
	}
}

// deploymentDone reports whether d finished rolling out its latest
// template, as kubectl rollout status decides.
func deploymentDone(d *api.Deployment) bool {
	if d.Status.ObservedGeneration < d.Generation || d.Spec.Replicas == nil {
		return false
	}
	r := *d.Spec.Replicas
	return d.Status.UpdatedReplicas == r && d.Status.Replicas == r && d.Status.AvailableReplicas == r
}

func condition(d *api.Deployment, t api.DeploymentConditionType) *api.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

func (cl *cluster) waitRolledOut(ns, name string, timeout time.Duration) *api.Deployment {
	cl.t.Helper()
	var d *api.Deployment
	waitFor(cl.t, timeout, "deployment "+name+" rolled out", func() (bool, error) {
		var err error
		d, err = client.Resource[api.Deployment](cl.c).Namespace(ns).Get(context.Background(), name)
		if err != nil {
			return false, err
		}
		c := condition(d, api.DeploymentAvailable)
		return deploymentDone(d) && c != nil && c.Status == api.ConditionTrue, fmt.Errorf("status %+v", d.Status)
	})
	return d
}

// livePods lists the pods of ns that are not being deleted.
func (cl *cluster) livePods(ns string) []api.Pod {
	cl.t.Helper()
	l, err := client.Resource[api.Pod](cl.c).Namespace(ns).List(context.Background(), client.ListOptions{})
	if err != nil {
		cl.t.Fatal(err)
	}
	var out []api.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// podWatch replays the pod events of a namespace in order and runs check
// on the state after each one, so an invariant is verified at every step
// the apiserver went through, not only at the moments a test polls.
type podWatch struct {
	mu         sync.Mutex
	pods       map[string]*api.Pod
	violations []string
	events     int
}

func (cl *cluster) watchPods(ns string, check func(pods map[string]*api.Pod) string) *podWatch {
	w := &podWatch{pods: map[string]*api.Pod{}}
	inf := informer.New[api.Pod](informer.For[api.Pod](cl.c, ns, client.ListOptions{}), informer.Options[api.Pod]{Logger: testLogger()})
	step := func(name string, p *api.Pod, initial bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if p == nil {
			delete(w.pods, name)
		} else {
			w.pods[name] = p
		}
		if initial {
			return // the state is complete only after the whole first list
		}
		w.events++
		if v := check(w.pods); v != "" && len(w.violations) < 10 {
			w.violations = append(w.violations, fmt.Sprintf("after event %d: %s", w.events, v))
		}
	}
	inf.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, initial bool) { step(p.Name, p, initial) },
		OnUpdate: func(_, p *api.Pod) { step(p.Name, p, false) },
		OnDelete: func(p *api.Pod, _ bool) { step(p.Name, nil, false) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	cl.t.Cleanup(func() { cancel(); <-done })
	waitFor(cl.t, 10*time.Second, "pod watch synced", func() (bool, error) { return inf.HasSynced(), nil })
	return w
}

// Violations returns what check reported, and how many events were seen.
func (w *podWatch) Violations() ([]string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.violations...), w.events
}

// counts returns the live (not terminating) pods and the available ones
// (Ready, not terminating), optionally only those with the given
// pod-template-hash.
func counts(pods map[string]*api.Pod) (live, available int) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		live++
		for _, c := range p.Status.Conditions {
			if c.Type == api.PodReady && c.Status == api.ConditionTrue {
				available++
			}
		}
	}
	return live, available
}
