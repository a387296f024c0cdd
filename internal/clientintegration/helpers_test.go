package clientintegration

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
)

// testTimeout bounds every test's context; each test should finish well
// within it.
const testTimeout = 20 * time.Second

// newClient returns a client of s with a generous rate limit, so the client
// side never throttles a test.
func newClient(t testing.TB, s *apiservertest.Server) *client.Client {
	t.Helper()
	return newClientFor(t, s.URL())
}

func newClientFor(t testing.TB, url string) *client.Client {
	t.Helper()
	c, err := client.New(&client.Config{Host: url, QPS: -1, Timeout: 10 * time.Second, UserAgent: "clientintegration-test"})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// createNamespace creates a namespace of its own for a subtest, so subtests
// can share one server.
func createNamespace(ctx context.Context, t testing.TB, c *client.Client, name string) string {
	t.Helper()
	ns := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}
	if _, err := client.Resource[api.Namespace](c).Create(ctx, ns); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

func newPod(ns, name string, labels map[string]string) *api.Pod {
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}},
	}
}

func newConfigMap(ns, name string, data map[string]string) *api.ConfigMap {
	return &api.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func newDeployment(ns, name string, replicas int32) *api.Deployment {
	labels := map[string]string{"app": name}
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: api.DeploymentSpec{
			Replicas: &replicas,
			Selector: &api.LabelSelector{MatchLabels: labels},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: labels},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}

// eventually polls cond every 20 ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rvOf parses a resourceVersion.
func rvOf(t testing.TB, rv string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(rv, &n); err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// restartable is an apiserver that can be restarted on the same address
// and data dir, so clients keep their URL across the restart (apiservertest
// listens on a fresh port each time).
type restartable struct {
	t    testing.TB
	opts app.Options
	addr string

	mu  sync.Mutex
	srv *app.APIServer
}

func startRestartable(t testing.TB, mutate ...func(*app.Options)) *restartable {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs embedded etcd (skipped with -short)")
	}
	opts := apiservertest.Options(t.TempDir())
	for _, m := range mutate {
		m(&opts)
	}
	r := &restartable{t: t, opts: opts, addr: "127.0.0.1:0"}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) start() {
	r.t.Helper()
	var l net.Listener
	var err error
	// The old listener's port is free once Stop returned, but give the
	// kernel a moment in case another test grabbed it meanwhile (it is
	// then a test failure, not a hang).
	for i := 0; i < 50; i++ {
		if l, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("listen on %s: %v", r.addr, err)
	}
	a := app.New(r.opts, l, apiservertest.Logger())
	if err := a.Start(context.Background()); err != nil {
		r.t.Fatalf("start apiserver: %v", err)
	}
	r.mu.Lock()
	r.srv = a
	r.addr = a.Addr()
	r.mu.Unlock()
}

func (r *restartable) stop() {
	r.mu.Lock()
	a := r.srv
	r.srv = nil
	r.mu.Unlock()
	if a == nil {
		return
	}
	if err := a.Stop(); err != nil {
		r.t.Logf("apiserver stopped with: %v", err)
	}
}

func (r *restartable) restart() {
	r.t.Helper()
	r.stop()
	r.start()
}

func (r *restartable) URL() string { return "http://" + r.addr }
