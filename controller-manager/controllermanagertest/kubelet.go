package controllermanagertest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
)

// KubeletOptions configure a simulated kubelet.
type KubeletOptions struct {
	// Nodes is how many fake nodes ("node-0" ... "node-N-1") unscheduled
	// pods are bound to, round-robin. No Node objects are created.
	// With LeaveBinding, only pods bound to these nodes are run.
	Nodes int
	// ReadyDelay is how long after binding a pod is reported Running and
	// Ready.
	ReadyDelay time.Duration
	// Workers is the number of pods handled at once (default 8).
	Workers int
	// Unready, when set, picks the pods reported Running but never Ready
	// (a crash-looping release).
	Unready func(*api.Pod) bool
	// LeaveBinding leaves unscheduled pods to a real scheduler: the
	// kubelet then only runs the pods bound to its nodes.
	LeaveBinding bool
}

// Kubelet stands in for the scheduler and the kubelets of fake nodes, for
// tests of controllers that need pods to run without containers: it binds
// each unscheduled pod to a node through the binding subresource, reports
// bound pods Running and Ready after ReadyDelay (through the status
// subresource, as a kubelet does), and finishes graceful deletions at once.
type Kubelet struct {
	c     *client.Client
	opts  KubeletOptions
	pods  *informer.Informer[api.Pod]
	queue *workqueue.RateLimitingQueue[string]
	next  atomic.Int64
	mu    sync.Mutex
	bound map[api.UID]time.Time
}

// RunKubelet starts a simulated kubelet on c; it stops when the test ends.
func RunKubelet(tb testing.TB, c *client.Client, opts KubeletOptions) *Kubelet {
	tb.Helper()
	if opts.Nodes <= 0 {
		opts.Nodes = 1
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	k := &Kubelet{c: c, opts: opts, bound: map[api.UID]time.Time{},
		queue: workqueue.NewRateLimiting[string](workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second))}
	k.pods = informer.New[api.Pod](informer.For[api.Pod](c, "", client.ListOptions{}), informer.Options[api.Pod]{Logger: apiservertest.Logger()})
	add := func(p *api.Pod) { k.queue.Add(cache.MetaNamespaceKeyFunc(p)) }
	k.pods.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, _ bool) { add(p) },
		OnUpdate: func(_, p *api.Pod) { add(p) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); k.pods.Run(ctx) }()
	for range opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k.processNext(ctx) {
			}
		}()
	}
	tb.Cleanup(func() { cancel(); k.queue.ShutDown(); wg.Wait() })
	return k
}

func (k *Kubelet) processNext(ctx context.Context) bool {
	key, shutdown := k.queue.Get()
	if shutdown {
		return false
	}
	defer k.queue.Done(key)
	if err := k.sync(ctx, key); err != nil && ctx.Err() == nil {
		k.queue.AddRateLimited(key)
		return true
	}
	k.queue.Forget(key)
	return true
}

// sync moves one pod a step: deleted, bound, or Running and Ready.
func (k *Kubelet) sync(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := k.pods.Lister().Namespace(ns).Get(name)
	if err != nil {
		return nil // gone
	}
	pods := client.Resource[api.Pod](k.c).Namespace(ns)
	switch {
	case pod.DeletionTimestamp != nil:
		zero := int64(0)
		err := pods.Delete(ctx, name, &api.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &api.Preconditions{UID: &pod.UID}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	case pod.Spec.NodeName == "" && k.opts.LeaveBinding:
		return nil
	case pod.Spec.NodeName == "":
		// A pod pinned to a node (a DaemonSet's) goes there, as the
		// scheduler would place it; the others round-robin.
		node := pinnedNode(pod)
		if node == "" {
			node = fmt.Sprintf("node-%d", k.next.Add(1)%int64(k.opts.Nodes))
		}
		b := &api.Binding{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns, UID: pod.UID}, Target: api.ObjectReference{Kind: "Node", Name: node}}
		err := pods.Subresource(name, "binding").Post(ctx, b, nil)
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		if err == nil {
			k.mu.Lock()
			k.bound[pod.UID] = time.Now()
			k.mu.Unlock()
		}
		return err
	case pod.Status.Phase == api.PodRunning:
		return nil
	case k.opts.LeaveBinding && !k.ownNode(pod.Spec.NodeName):
		return nil
	}
	k.mu.Lock()
	at, ok := k.bound[pod.UID]
	if !ok {
		at = time.Now()
		k.bound[pod.UID] = at
	}
	k.mu.Unlock()
	if wait := k.opts.ReadyDelay - time.Since(at); wait > 0 {
		k.queue.AddAfter(key, wait)
		return nil
	}
	p := api.DeepCopy(pod)
	now := api.Now()
	var ready api.ConditionStatus = api.ConditionTrue
	if k.opts.Unready != nil && k.opts.Unready(pod) {
		ready = api.ConditionFalse
	}
	p.Status.Phase = api.PodRunning
	p.Status.StartTime = &now
	p.Status.PodIP = "10.244.0.1"
	p.Status.Conditions = []api.PodCondition{
		{Type: api.PodScheduled, Status: api.ConditionTrue, LastTransitionTime: now},
		{Type: api.ContainersReady, Status: ready, LastTransitionTime: now},
		{Type: api.PodReady, Status: ready, LastTransitionTime: now},
	}
	_, err = pods.UpdateStatus(ctx, p)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // a newer event queues it again
	}
	return err
}

// ownNode reports whether name is one of the kubelet's nodes.
func (k *Kubelet) ownNode(name string) bool {
	for i := range k.opts.Nodes {
		if name == fmt.Sprintf("node-%d", i) {
			return true
		}
	}
	return false
}

// pinnedNode is the node a required node affinity on metadata.name In
// [one node] pins the pod to, if any.
func pinnedNode(pod *api.Pod) string {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && f.Operator == api.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
