package controllermanagertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/internal/client"
)

// Cluster is a test apiserver with controllers running against it.
type Cluster struct {
	T      testing.TB
	Server *apiservertest.Server
	// Client is an unthrottled admin client for the test itself.
	Client *client.Client
}

// Start starts an apiserver and app.Run with only the named controllers
// (no leader election, no HTTP server); mutate adjusts the options, e.g.
// Controller.NodeMonitorGracePeriod, or turns leader election and the HTTP
// server back on (the app package's own test). Both stop when the test
// ends, and the test fails unless Run then returns nil within 30 s.
func Start(t testing.TB, controllers []string, mutate func(*app.Options)) *Cluster {
	t.Helper()
	t.Setenv("KUBECONFIG", "")
	srv := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: srv.URL(), QPS: -1, Timeout: 30 * time.Second, UserAgent: "controllermanagertest"})
	if err != nil {
		t.Fatal(err)
	}
	o := app.DefaultOptions()
	o.Client.Master = srv.URL()
	o.Client.QPS, o.Client.Burst = 1000, 2000
	o.Controllers = controllers
	o.Serving.SecurePort = 0
	o.LeaderElection.LeaderElect = false
	if mutate != nil {
		mutate(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, o, apiservertest.Logger()) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller-manager returned: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller-manager did not stop")
		}
	})
	return &Cluster{T: t, Server: srv, Client: c}
}

// Context returns a context ending with the test, bounded by timeout.
func (cl *Cluster) Context(timeout time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cl.T.Cleanup(cancel)
	return ctx
}

// Eventually polls cond every 50 ms until it returns true, failing the test
// with what after timeout. cond's last error is reported too.
func (cl *Cluster) Eventually(timeout time.Duration, what string, cond func() (bool, error)) {
	cl.T.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			cl.T.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Namespace creates a namespace.
func (cl *Cluster) Namespace(name string) {
	cl.T.Helper()
	if _, err := client.Resource[api.Namespace](cl.Client).Create(cl.Context(10*time.Second), &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}); err != nil {
		cl.T.Fatal(err)
	}
}

// SetPodStatus writes a pod's status as its kubelet would: phase, pod IP
// and the Ready condition.
func (cl *Cluster) SetPodStatus(ns, name string, phase api.PodPhase, ip string, ready bool) {
	cl.T.Helper()
	ctx := cl.Context(10 * time.Second)
	pods := client.Resource[api.Pod](cl.Client).Namespace(ns)
	for attempt := 0; ; attempt++ {
		p, err := pods.Get(ctx, name)
		if err != nil {
			cl.T.Fatal(err)
		}
		st := api.ConditionStatus(api.ConditionFalse)
		if ready {
			st = api.ConditionTrue
		}
		now := api.Now()
		p.Status.Phase = phase
		p.Status.PodIP = ip
		if ip != "" {
			p.Status.PodIPs = []api.PodIP{{IP: ip}}
		}
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: st, LastTransitionTime: now}}
		if _, err = pods.UpdateStatus(ctx, p); err == nil {
			return
		}
		if attempt > 5 {
			cl.T.Fatalf("set status of pod %s/%s: %v", ns, name, err)
		}
	}
}

// Node is a simulated node: a Node object and a Lease in kube-node-lease,
// both renewed by a goroutine while it beats.
type Node struct {
	cl     *Cluster
	Name   string
	mu     sync.Mutex
	paused bool
	stop   context.CancelFunc
	done   chan struct{}
}

// StartNode registers a Ready node and renews its Lease and Ready heartbeat
// every period until the test ends or Pause.
func (cl *Cluster) StartNode(name string, period time.Duration) *Node {
	cl.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{cl: cl, Name: name, stop: cancel, done: make(chan struct{})}
	now := api.Now()
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{api.LabelHostname: name}},
		Status: api.NodeStatus{Conditions: []api.NodeCondition{
			{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now},
		}}}
	if _, err := client.Resource[api.Node](cl.Client).Create(ctx, node); err != nil {
		cl.T.Fatal(err)
	}
	if err := n.renewLease(ctx); err != nil {
		cl.T.Fatal(err)
	}
	go func() {
		defer close(n.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n.mu.Lock()
			paused := n.paused
			n.mu.Unlock()
			if !paused {
				_ = n.renewLease(ctx)
			}
		}
	}()
	cl.T.Cleanup(func() { cancel(); <-n.done })
	return n
}

// Pause stops the heartbeat (the kubelet died or the network split).
func (n *Node) Pause() {
	n.mu.Lock()
	n.paused = true
	n.mu.Unlock()
}

// Resume renews the Lease again and posts Ready=True, as a kubelet coming
// back does.
func (n *Node) Resume() {
	n.cl.T.Helper()
	n.mu.Lock()
	n.paused = false
	n.mu.Unlock()
	ctx := n.cl.Context(10 * time.Second)
	if err := n.renewLease(ctx); err != nil {
		n.cl.T.Fatal(err)
	}
	if err := n.postReady(ctx); err != nil {
		n.cl.T.Fatal(err)
	}
}

func (n *Node) renewLease(ctx context.Context) error {
	leases := client.Resource[api.Lease](n.cl.Client).Namespace(api.NamespaceNodeLease)
	now := api.NowMicro()
	l, err := leases.Get(ctx, n.Name)
	if err != nil {
		secs := int32(40)
		holder := n.Name
		_, err = leases.Create(ctx, &api.Lease{ObjectMeta: api.ObjectMeta{Namespace: api.NamespaceNodeLease, Name: n.Name},
			Spec: api.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &now}})
		return err
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l)
	return err
}

func (n *Node) postReady(ctx context.Context) error {
	nodes := client.Resource[api.Node](n.cl.Client)
	for attempt := 0; attempt < 10; attempt++ {
		node, err := nodes.Get(ctx, n.Name)
		if err != nil {
			return err
		}
		now := api.Now()
		for i := range node.Status.Conditions {
			c := &node.Status.Conditions[i]
			if c.Type == api.NodeReady {
				if c.Status != api.ConditionTrue {
					c.LastTransitionTime = now
				}
				c.Status, c.Reason, c.Message, c.LastHeartbeatTime = api.ConditionTrue, "KubeletReady", "kubelet is posting ready status", now
			}
		}
		if _, err = nodes.UpdateStatus(ctx, node); err == nil {
			return nil
		}
	}
	return fmt.Errorf("post Ready for node %s: gave up", n.Name)
}

// Parallel runs f(0..n-1), 16 at a time, as a benchmark fills a cluster;
// the first error fails tb once all are done.
func Parallel(tb testing.TB, n int, f func(i int) error) {
	tb.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}
