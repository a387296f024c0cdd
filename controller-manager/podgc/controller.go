package podgc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// Kube's timing: a pass every CheckPeriod; a node missing from the cache
// is looked up on the apiserver only after Quarantine, in case the cache
// is behind.
const (
	CheckPeriod = 20 * time.Second
	Quarantine  = 40 * time.Second
)

// Controller is the pod garbage collector.
type Controller struct {
	// Periodic runs gc every check period once the caches synced; kube's
	// podgc has no queue either.
	*controller.Periodic
	client *client.Client
	pods   *informer.Informer[api.Pod]
	nodes  *informer.Informer[api.Node]
	log    *slog.Logger
	// threshold is --terminated-pod-gc-threshold (<= 0: terminated pods
	// are kept).
	threshold  int
	quarantine time.Duration
	now        func() time.Time
	// missing is when each node name pods are bound to was first seen
	// missing from the node cache.
	missing map[string]time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the "podgc" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return NewController(ctx.Client,
		informer.Shared[api.Pod](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Node](ctx.Factory, "", client.ListOptions{}),
		ctx.Logger, ctx.Options.TerminatedPodGCThreshold, CheckPeriod, Quarantine), nil
}

// NewController wires the collector over the pod and node informers.
func NewController(c *client.Client, pods *informer.Informer[api.Pod], nodes *informer.Informer[api.Node], log *slog.Logger,
	threshold int, checkPeriod, quarantine time.Duration) *Controller {
	ctl := &Controller{client: c, pods: pods, nodes: nodes, log: log, threshold: threshold,
		quarantine: quarantine, now: time.Now, missing: map[string]time.Time{}}
	ctl.Periodic = controller.NewPeriodic(controller.PeriodicConfig{Period: checkPeriod, Pass: ctl.gc, Log: log})
	ctl.WaitFor(pods, nodes)
	return ctl
}

// gc is one pass, in kube's order.
func (c *Controller) gc(ctx context.Context) {
	pods := c.pods.Lister().List(nil)
	nodes := map[string]*api.Node{}
	for _, n := range c.nodes.Lister().List(nil) {
		nodes[n.Name] = n
	}
	if c.threshold > 0 {
		c.gcTerminated(ctx, pods)
	}
	c.gcTerminatingOutOfService(ctx, pods, nodes)
	c.gcOrphaned(ctx, pods, nodes)
	c.gcUnscheduledTerminating(ctx, pods)
}

func terminated(p *api.Pod) bool {
	return p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
}

// gcTerminated deletes the oldest terminated pods beyond the threshold,
// evicted ones first.
func (c *Controller) gcTerminated(ctx context.Context, pods []*api.Pod) {
	var done []*api.Pod
	for _, p := range pods {
		if terminated(p) {
			done = append(done, p)
		}
	}
	n := len(done) - c.threshold
	if n <= 0 {
		return
	}
	sort.Slice(done, func(i, j int) bool {
		a, b := done[i], done[j]
		if ea, eb := evicted(a), evicted(b); ea != eb {
			return ea
		}
		if !a.CreationTimestamp.Equal(b.CreationTimestamp.Time) {
			return a.CreationTimestamp.Before(b.CreationTimestamp.Time)
		}
		return a.Name < b.Name
	})
	c.log.Info("garbage collecting terminated pods", "count", n, "threshold", c.threshold)
	c.deleteAll(ctx, done[:n], nil, "terminated")
}

// evicted is the kubelet's mark of a pod it evicted (reason Evicted).
func evicted(p *api.Pod) bool { return p.Status.Phase == api.PodFailed && p.Status.Reason == "Evicted" }

// gcTerminatingOutOfService deletes terminating pods of NotReady nodes an
// administrator tainted node.kubernetes.io/out-of-service (the node is
// known to be down: its kubelet will not finish them).
func (c *Controller) gcTerminatingOutOfService(ctx context.Context, pods []*api.Pod, nodes map[string]*api.Node) {
	var gone []*api.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			continue
		}
		n, ok := nodes[p.Spec.NodeName]
		if !ok || nodeReady(n) || !hasTaintKey(n, api.TaintNodeOutOfService) {
			continue
		}
		gone = append(gone, p)
	}
	c.deleteAll(ctx, gone, nil, "terminating on an out-of-service node")
}

// gcOrphaned deletes the pods bound to nodes gone for good: missing from
// the cache for the quarantine period, and not found on the apiserver.
func (c *Controller) gcOrphaned(ctx context.Context, pods []*api.Pod, nodes map[string]*api.Node) {
	now := c.now()
	wanted := map[string]bool{}
	for _, p := range pods {
		if name := p.Spec.NodeName; name != "" && nodes[name] == nil {
			wanted[name] = true
			if _, ok := c.missing[name]; !ok {
				c.missing[name] = now
			}
		}
	}
	deleted := map[string]bool{}
	for name, since := range c.missing {
		if !wanted[name] {
			// The node came back, or its pods went.
			delete(c.missing, name)
			continue
		}
		if now.Sub(since) < c.quarantine {
			continue
		}
		_, err := client.Resource[api.Node](c.client).Get(ctx, name)
		switch {
		case apierrors.IsNotFound(err):
			deleted[name] = true
		case err != nil:
			c.log.Error("get node", "node", name, "err", err)
		default:
			// It exists: the cache was behind.
			delete(c.missing, name)
		}
	}
	var orphans []*api.Pod
	for _, p := range pods {
		if deleted[p.Spec.NodeName] {
			orphans = append(orphans, p)
		}
	}
	cond := &api.PodCondition{Type: api.DisruptionTarget, Status: api.ConditionTrue,
		Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
	c.deleteAll(ctx, orphans, cond, "orphaned")
}

// gcUnscheduledTerminating deletes terminating pods no node ever took.
func (c *Controller) gcUnscheduledTerminating(ctx context.Context, pods []*api.Pod) {
	var gone []*api.Pod
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			gone = append(gone, p)
		}
	}
	c.deleteAll(ctx, gone, nil, "unscheduled terminating")
}

// deleteAll marks each pod Failed (with cond, when given) unless it has
// terminated, and force-deletes it, concurrently as kube does.
func (c *Controller) deleteAll(ctx context.Context, pods []*api.Pod, cond *api.PodCondition, why string) {
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() {
			key := p.Namespace + "/" + p.Name
			if err := c.markFailedAndDelete(ctx, p, cond); err != nil {
				c.log.Error("force deleting pod", "pod", key, "reason", why, "err", err)
				return
			}
			c.log.Info("force deleted pod", "pod", key, "node", p.Spec.NodeName, "reason", why)
		})
	}
	wg.Wait()
}

func (c *Controller) markFailedAndDelete(ctx context.Context, p *api.Pod, cond *api.PodCondition) error {
	pods := client.Resource[api.Pod](c.client).Namespace(p.Namespace)
	if !terminated(p) {
		// No kubelet will write this pod's last status: the collector
		// does, so that its controller counts it failed. A strategic
		// merge patch (conditions merge by type) bound to the pod's UID,
		// as kube's PatchPodStatus.
		status := map[string]any{"phase": api.PodFailed}
		if cond != nil {
			status["conditions"] = []api.PodCondition{withTransition(*cond, p.Status.Conditions, c.now())}
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": p.UID}, "status": status})
		if err != nil {
			return err
		}
		if _, err := pods.Patch(ctx, p.Name, client.StrategicMergePatchType, patch, "status"); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				// Gone, or another pod of the same name now.
				return nil
			}
			return fmt.Errorf("mark failed: %w", err)
		}
	}
	zero := int64(0)
	uid := p.UID
	err := pods.Delete(ctx, p.Name, &api.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &api.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete: %w", err)
	}
	return nil
}

// withTransition is cond with its transition time: the one of the pod's
// condition of that type when its status is unchanged, else now.
func withTransition(cond api.PodCondition, have []api.PodCondition, now time.Time) api.PodCondition {
	cond.LastTransitionTime = api.NewTime(now)
	for _, old := range have {
		if old.Type == cond.Type && old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
	}
	return cond
}

func nodeReady(n *api.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

func hasTaintKey(n *api.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
