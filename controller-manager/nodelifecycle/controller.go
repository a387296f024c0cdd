package nodelifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
	"golang.org/x/time/rate"
)

// podsByNode indexes pods by spec.nodeName.
const podsByNode = "nodelifecycle.nodeName"

// Conditions the controller sets to Unknown when a node goes silent, as kube.
var monitoredConditions = []api.NodeConditionType{api.NodeReady, api.NodeMemoryPressure, api.NodeDiskPressure, api.NodePIDPressure}

// Config is what the controller needs besides its informers.
type Config struct {
	// GracePeriod is --node-monitor-grace-period, MonitorPeriod
	// --node-monitor-period, EvictionRate --node-eviction-rate (nodes per
	// second that may get a NoExecute taint).
	GracePeriod   time.Duration
	MonitorPeriod time.Duration
	EvictionRate  float64
}

// Controller is the node lifecycle and taint eviction controller.
type Controller struct {
	client      *client.Client
	nodes       *informer.Informer[api.Node]
	leases      *informer.Informer[api.Lease]
	pods        *informer.Informer[api.Pod]
	recorder    events.Recorder // node-controller
	evictionRec events.Recorder // taint-eviction-controller
	log         *slog.Logger
	metrics     *controller.SyncMetrics
	cfg         Config
	now         func() time.Time
	// tainter limits how fast nodes get NoExecute taints.
	tainter *rate.Limiter
	// evictions holds pod keys whose tolerations the taint manager checks.
	evictions *workqueue.RateLimitingQueue[string]

	mu     sync.Mutex
	health map[string]*nodeHealth
	// firstSeen stands in for a taint's timeAdded when it has none.
	firstSeen map[string]time.Time
}

// nodeHealth is what the controller remembers of a node between passes, on
// its own clock: when it last saw the kubelet alive.
type nodeHealth struct {
	probeTimestamp time.Time
	heartbeat      time.Time // Ready condition's lastHeartbeatTime seen last
	leaseRenew     time.Time // Lease renewTime seen last
}

var _ controller.Interface = (*Controller)(nil)

// New is the "nodelifecycle" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	o := ctx.Options
	m, err := controller.NewSyncMetrics(ctx.Metrics, "nodelifecycle")
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx.Client,
		informer.Shared[api.Node](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Lease](ctx.Factory, api.NamespaceNodeLease, client.ListOptions{}),
		informer.Shared[api.Pod](ctx.Factory, "", client.ListOptions{}),
		ctx.Events.RecorderFor("node-controller"), ctx.Events.RecorderFor("taint-eviction-controller"),
		ctx.Logger, Config{GracePeriod: o.NodeMonitorGracePeriod, MonitorPeriod: o.NodeMonitorPeriod, EvictionRate: o.NodeEvictionRate})
	if err != nil {
		return nil, err
	}
	c.metrics = m
	return c, nil
}

// NewController wires the controller over its informers.
func NewController(c *client.Client, nodes *informer.Informer[api.Node], leases *informer.Informer[api.Lease], pods *informer.Informer[api.Pod],
	rec, evictionRec events.Recorder, log *slog.Logger, cfg Config) (*Controller, error) {
	if cfg.GracePeriod <= 0 || cfg.MonitorPeriod <= 0 {
		return nil, fmt.Errorf("node monitor grace period and period must be positive")
	}
	limit := rate.Limit(cfg.EvictionRate)
	if cfg.EvictionRate <= 0 {
		limit = rate.Inf
	}
	ctl := &Controller{
		client: c, nodes: nodes, leases: leases, pods: pods,
		recorder: rec, evictionRec: evictionRec, log: log, cfg: cfg, now: time.Now,
		tainter:   rate.NewLimiter(limit, 1),
		evictions: workqueue.NewRateLimiting[string](nil, workqueue.WithName("taint-eviction")),
		health:    map[string]*nodeHealth{},
		firstSeen: map[string]time.Time{},
	}
	if err := pods.AddIndexers(cache.Indexers[api.Pod]{podsByNode: func(p *api.Pod) []string {
		if p.Spec.NodeName == "" {
			return nil
		}
		return []string{p.Spec.NodeName}
	}}); err != nil {
		return nil, err
	}
	pods.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) { ctl.enqueuePod(p) },
		OnUpdate: func(old, p *api.Pod) {
			if old.Spec.NodeName != p.Spec.NodeName || len(old.Spec.Tolerations) != len(p.Spec.Tolerations) {
				ctl.enqueuePod(p)
			}
		},
	})
	nodes.AddEventHandler(informer.Handler[api.Node]{
		OnAdd: func(n *api.Node, _ bool) {
			if len(noExecuteTaints(n.Spec.Taints)) > 0 {
				ctl.enqueueNodePods(n.Name)
			}
		},
		OnUpdate: func(old, n *api.Node) {
			if !sameTaints(noExecuteTaints(old.Spec.Taints), noExecuteTaints(n.Spec.Taints)) {
				ctl.enqueueNodePods(n.Name)
			}
		},
		OnDelete: func(n *api.Node, _ bool) {
			ctl.mu.Lock()
			delete(ctl.health, n.Name)
			ctl.mu.Unlock()
		},
	})
	return ctl, nil
}

func sameTaints(a, b []api.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !hasTaint(b, t) {
			return false
		}
	}
	return true
}

func (c *Controller) enqueuePod(p *api.Pod) {
	if p.Spec.NodeName != "" {
		c.evictions.Add(cache.MetaNamespaceKeyFunc(p))
	}
}

func (c *Controller) enqueueNodePods(node string) {
	pods, _ := c.pods.Store().ByIndex(podsByNode, node)
	for _, p := range pods {
		c.evictions.Add(cache.MetaNamespaceKeyFunc(p))
	}
}

// Run watches node health every monitor period and runs the taint eviction
// workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if !informer.WaitForCacheSync(ctx, c.nodes, c.leases, c.pods) {
		return nil
	}
	c.log.Info("monitoring node health", "gracePeriod", c.cfg.GracePeriod, "period", c.cfg.MonitorPeriod, "evictionRate", c.cfg.EvictionRate)
	go func() {
		t := time.NewTicker(c.cfg.MonitorPeriod)
		defer t.Stop()
		for {
			if err := c.monitorNodeHealth(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("monitoring node health", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	controller.RunWorkers(ctx, c.evictions, max(workers, 1), c.log, controller.Instrument(c.metrics, c.syncPod))
	return nil
}

// monitorNodeHealth is one pass over every node: update its health, then its
// taints. Errors of single nodes are collected; the next pass retries them.
func (c *Controller) monitorNodeHealth(ctx context.Context) error {
	var errs []error
	for _, node := range c.nodes.Lister().List(labels.Everything()) {
		observed, current, latest, err := c.tryUpdateNodeHealth(ctx, node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if observed == api.ConditionTrue && current != api.ConditionTrue {
			c.recorder.Eventf(node, api.EventTypeNormal, "NodeNotReady", "Node %s status is now: %s", node.Name, "NodeNotReady")
			c.log.Info("node is not ready", "node", node.Name, "ready", current)
			if current == api.ConditionUnknown {
				if err := c.markPodsNotReady(ctx, node.Name); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if err := c.reconcileTaints(ctx, latest, current); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d node(s) failed, first: %w", len(errs), errs[0])
	}
	return nil
}

// tryUpdateNodeHealth is kube's: it notes when the kubelet last showed
// life (a new Ready heartbeat or Lease renewal, on the controller's clock)
// and, after the grace period, sets the node's conditions to Unknown. It
// returns the Ready status before and after, and the node as written.
func (c *Controller) tryUpdateNodeHealth(ctx context.Context, node *api.Node) (observed, current api.ConditionStatus, latest *api.Node, err error) {
	now := c.now()
	ready := nodeCondition(&node.Status, api.NodeReady)
	observed = api.ConditionUnknown
	var heartbeat time.Time
	if ready != nil {
		observed = ready.Status
		heartbeat = ready.LastHeartbeatTime.Time
	}
	var renew time.Time
	if lease, err := c.leases.Lister().Namespace(api.NamespaceNodeLease).Get(node.Name); err == nil && lease.Spec.RenewTime != nil {
		renew = lease.Spec.RenewTime.Time
	}

	c.mu.Lock()
	h := c.health[node.Name]
	switch {
	case h == nil:
		h = &nodeHealth{probeTimestamp: now, heartbeat: heartbeat, leaseRenew: renew}
		if ready == nil && renew.IsZero() {
			// Never heard of: the grace period runs from its creation.
			h.probeTimestamp = node.CreationTimestamp.Time
		}
		c.health[node.Name] = h
	default:
		if !heartbeat.Equal(h.heartbeat) {
			h.heartbeat, h.probeTimestamp = heartbeat, now
		}
		if renew.After(h.leaseRenew) {
			h.leaseRenew, h.probeTimestamp = renew, now
		}
	}
	expired := now.After(h.probeTimestamp.Add(c.cfg.GracePeriod))
	c.mu.Unlock()

	if !expired {
		return observed, observed, node, nil
	}
	updated := api.DeepCopy(node)
	changed := false
	for _, t := range monitoredConditions {
		cond := nodeCondition(&updated.Status, t)
		if cond == nil {
			updated.Status.Conditions = append(updated.Status.Conditions, api.NodeCondition{
				Type: t, Status: api.ConditionUnknown, Reason: "NodeStatusNeverUpdated", Message: "Kubelet never posted node status.",
				LastHeartbeatTime: node.CreationTimestamp, LastTransitionTime: api.NewTime(now),
			})
			changed = true
			continue
		}
		if cond.Status != api.ConditionUnknown {
			cond.Status = api.ConditionUnknown
			cond.Reason = "NodeStatusUnknown"
			cond.Message = "Kubelet stopped posting node status."
			cond.LastTransitionTime = api.NewTime(now)
			changed = true
		}
	}
	if !changed {
		return observed, api.ConditionUnknown, node, nil
	}
	written, err := client.Resource[api.Node](c.client).UpdateStatus(ctx, updated)
	if err != nil {
		return observed, observed, node, fmt.Errorf("mark node %s unknown: %w", node.Name, err)
	}
	c.log.Info("node stopped posting status", "node", node.Name, "since", h.probeTimestamp)
	return observed, api.ConditionUnknown, written, nil
}

// reconcileTaints gives the node the NoExecute taint matching its Ready
// status (unreachable for Unknown, not-ready for False, none for True) and,
// as kube's TaintNodesByCondition, the NoSchedule taints of its conditions
// and spec.unschedulable. Adding a NoExecute taint is rate-limited by
// --node-eviction-rate; everything else is not.
func (c *Controller) reconcileTaints(ctx context.Context, node *api.Node, ready api.ConditionStatus) error {
	name := node.Name
	var add, remove []api.Taint
	switch ready {
	case api.ConditionUnknown:
		add, remove = []api.Taint{UnreachableTaint}, []api.Taint{NotReadyTaint}
	case api.ConditionFalse:
		add, remove = []api.Taint{NotReadyTaint}, []api.Taint{UnreachableTaint}
	default:
		remove = []api.Taint{UnreachableTaint, NotReadyTaint}
	}
	now := c.now()
	addingNoExecute := len(add) > 0 && !hasTaint(node.Spec.Taints, add[0])
	if addingNoExecute && !c.tainter.AllowN(now, 1) {
		add, addingNoExecute = nil, false // the next pass tries again
	}
	noSchedAdd, noSchedRemove := noScheduleTaints(node)
	taints, changed := withTaints(node.Spec.Taints, append(add, noSchedAdd...), append(remove, noSchedRemove...), now)
	if !changed {
		return nil
	}
	updated := api.DeepCopy(node)
	updated.Spec.Taints = taints
	if _, err := client.Resource[api.Node](c.client).Update(ctx, updated); err != nil {
		return fmt.Errorf("update taints of node %s: %w", name, err)
	}
	if addingNoExecute {
		c.log.Info("tainted node", "node", name, "taint", add[0].Key)
	} else {
		c.log.Info("updated node taints", "node", name, "ready", ready)
	}
	return nil
}

// noScheduleTaints is kube's doNoScheduleTaintingPass: which of the
// condition NoSchedule taints the node should have and which not.
func noScheduleTaints(node *api.Node) (add, remove []api.Taint) {
	want := map[string]bool{}
	for _, cond := range node.Status.Conditions {
		switch {
		case cond.Type == api.NodeReady && cond.Status == api.ConditionFalse:
			want[api.TaintNodeNotReady] = true
		case cond.Type == api.NodeReady && cond.Status == api.ConditionUnknown:
			want[api.TaintNodeUnreachable] = true
		case cond.Type == api.NodeMemoryPressure && cond.Status == api.ConditionTrue:
			want[api.TaintNodeMemoryPressure] = true
		case cond.Type == api.NodeDiskPressure && cond.Status == api.ConditionTrue:
			want[api.TaintNodeDiskPressure] = true
		case cond.Type == api.NodePIDPressure && cond.Status == api.ConditionTrue:
			want[api.TaintNodePIDPressure] = true
		case cond.Type == api.NodeNetworkUnavailable && cond.Status == api.ConditionTrue:
			want[api.TaintNodeNetworkUnavailable] = true
		}
	}
	if node.Spec.Unschedulable {
		want[api.TaintNodeUnschedulable] = true
	}
	for _, key := range []string{api.TaintNodeNotReady, api.TaintNodeUnreachable, api.TaintNodeMemoryPressure, api.TaintNodeDiskPressure,
		api.TaintNodePIDPressure, api.TaintNodeNetworkUnavailable, api.TaintNodeUnschedulable} {
		t := api.Taint{Key: key, Effect: api.TaintEffectNoSchedule}
		if want[key] {
			add = append(add, t)
		} else {
			remove = append(remove, t)
		}
	}
	return add, remove
}

// markPodsNotReady is kube's MarkPodsNotReady: the pods of a node that went
// silent are no longer Ready, so endpoints drop them.
func (c *Controller) markPodsNotReady(ctx context.Context, node string) error {
	pods, _ := c.pods.Store().ByIndex(podsByNode, node)
	var firstErr error
	for _, p := range pods {
		idx := -1
		for i, cond := range p.Status.Conditions {
			if cond.Type == api.PodReady {
				idx = i
			}
		}
		if idx < 0 || p.Status.Conditions[idx].Status == api.ConditionFalse {
			continue
		}
		updated := api.DeepCopy(p)
		cond := &updated.Status.Conditions[idx]
		cond.Status = api.ConditionFalse
		cond.LastTransitionTime = api.NewTime(c.now())
		if _, err := client.Resource[api.Pod](c.client).Namespace(p.Namespace).UpdateStatus(ctx, updated); err != nil && !apierrors.IsNotFound(err) && firstErr == nil {
			firstErr = fmt.Errorf("mark pod %s/%s not ready: %w", p.Namespace, p.Name, err)
		}
	}
	return firstErr
}

// syncPod is the taint manager for one pod: a pod on a node with NoExecute
// taints it does not tolerate is deleted now; one tolerating them for a
// while is deleted when that time has passed since the taint was added.
func (c *Controller) syncPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := c.pods.Lister().Namespace(ns).Get(name)
	if err != nil || pod.DeletionTimestamp != nil || pod.Spec.NodeName == "" {
		c.forget(key)
		return nil
	}
	node, err := c.nodes.Lister().Get(pod.Spec.NodeName)
	if err != nil {
		c.forget(key)
		return nil
	}
	taints := noExecuteTaints(node.Spec.Taints)
	if len(taints) == 0 {
		c.forget(key)
		return nil
	}
	d, forever, tolerated := tolerationTime(pod.Spec.Tolerations, taints)
	now := c.now()
	if tolerated {
		if forever {
			return nil
		}
		deadline := c.taintedSince(key, taints, now).Add(d)
		if now.Before(deadline) {
			c.evictions.AddAfter(key, deadline.Sub(now))
			return nil
		}
	}
	return c.evict(ctx, pod, key)
}

// taintedSince is when the taints started to apply: the earliest timeAdded,
// or when the controller first saw them on this pod's node.
func (c *Controller) taintedSince(key string, taints []api.Taint, now time.Time) time.Time {
	var since time.Time
	for _, t := range taints {
		if t.TimeAdded != nil && (since.IsZero() || t.TimeAdded.Before(since)) {
			since = t.TimeAdded.Time
		}
	}
	if !since.IsZero() {
		return since
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.firstSeen[key]; ok {
		return s
	}
	c.firstSeen[key] = now
	return now
}

func (c *Controller) forget(key string) {
	c.mu.Lock()
	delete(c.firstSeen, key)
	c.mu.Unlock()
}

func (c *Controller) evict(ctx context.Context, pod *api.Pod, key string) error {
	c.evictionRec.Eventf(pod, api.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s", key)
	updated := api.DeepCopy(pod)
	if setDisruptionTarget(&updated.Status, c.now()) {
		if _, err := client.Resource[api.Pod](c.client).Namespace(pod.Namespace).UpdateStatus(ctx, updated); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("mark pod %s as a disruption target: %w", key, err)
		}
	}
	err := client.Resource[api.Pod](c.client).Namespace(pod.Namespace).Delete(ctx, pod.Name, &api.DeleteOptions{Preconditions: &api.Preconditions{UID: &pod.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("evict pod %s: %w", key, err)
	}
	c.log.Info("evicted pod from tainted node", "pod", key, "node", pod.Spec.NodeName)
	c.forget(key)
	return nil
}

// setDisruptionTarget adds kube's DisruptionTarget condition with reason
// DeletionByTaintManager; false if it is there already.
func setDisruptionTarget(s *api.PodStatus, now time.Time) bool {
	for _, cond := range s.Conditions {
		if cond.Type == api.DisruptionTarget && cond.Status == api.ConditionTrue {
			return false
		}
	}
	s.Conditions = append(s.Conditions, api.PodCondition{
		Type: api.DisruptionTarget, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(now),
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint",
	})
	return true
}
