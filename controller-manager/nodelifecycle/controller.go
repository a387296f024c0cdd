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
	// SecondaryEvictionRate, UnhealthyZoneThreshold and LargeClusterSize
	// are --secondary-node-eviction-rate, --unhealthy-zone-threshold and
	// --large-cluster-size-threshold.
	SecondaryEvictionRate  float64
	UnhealthyZoneThreshold float64
	LargeClusterSize       int
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
	cfg         Config
	now         func() time.Time
	// zoneLimiters limit how fast each zone's nodes get NoExecute taints.
	zoneLimiters map[string]*rate.Limiter
	// allDisrupted is kube's "master disruption mode": every zone is fully
	// disrupted, which looks more like a control-plane problem than dead
	// nodes, so nothing is evicted.
	allDisrupted bool
	// evictions is the taint manager's loop: its queue holds pod keys
	// whose tolerations syncPod checks.
	evictions *controller.Loop[string]

	mu     sync.Mutex
	health map[string]*nodeHealth
	// firstSeen stands in for a taint's timeAdded when it has none.
	firstSeen map[string]time.Time
	// scheduled holds the pods whose eviction waits for their tolerations
	// to run out, so a cancelled one is reported.
	scheduled map[string]bool
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
		ctx.Logger, Config{
			GracePeriod: o.NodeMonitorGracePeriod, MonitorPeriod: o.NodeMonitorPeriod, EvictionRate: o.NodeEvictionRate,
			SecondaryEvictionRate: o.SecondaryNodeEvictionRate, UnhealthyZoneThreshold: o.UnhealthyZoneThreshold, LargeClusterSize: o.LargeClusterSizeThreshold,
		})
	if err != nil {
		return nil, err
	}
	c.evictions.SetMetrics(m)
	return c, nil
}

// NewController wires the controller over its informers.
func NewController(c *client.Client, nodes *informer.Informer[api.Node], leases *informer.Informer[api.Lease], pods *informer.Informer[api.Pod],
	rec, evictionRec events.Recorder, log *slog.Logger, cfg Config) (*Controller, error) {
	if cfg.GracePeriod <= 0 || cfg.MonitorPeriod <= 0 {
		return nil, fmt.Errorf("node monitor grace period and period must be positive")
	}
	ctl := &Controller{
		client: c, nodes: nodes, leases: leases, pods: pods,
		recorder: rec, evictionRec: evictionRec, log: log, cfg: cfg, now: time.Now,
		zoneLimiters: map[string]*rate.Limiter{},
		health:       map[string]*nodeHealth{},
		firstSeen:    map[string]time.Time{},
		scheduled:    map[string]bool{},
	}
	ctl.evictions = controller.NewLoop(controller.LoopConfig[string]{Queue: "taint-eviction", Sync: ctl.syncPod, Log: log})
	if err := pods.AddIndexers(cache.Indexers[api.Pod]{podsByNode: func(p *api.Pod) []string {
		if p.Spec.NodeName == "" {
			return nil
		}
		return []string{p.Spec.NodeName}
	}}); err != nil {
		return nil, err
	}
	controller.Watch(ctl.evictions, pods, informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) { ctl.enqueuePod(p) },
		OnUpdate: func(old, p *api.Pod) {
			if old.Spec.NodeName != p.Spec.NodeName || len(old.Spec.Tolerations) != len(p.Spec.Tolerations) {
				ctl.enqueuePod(p)
			}
		},
	})
	controller.Watch(ctl.evictions, nodes, informer.Handler[api.Node]{
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
	// The node health monitor reads the leases without handling them.
	ctl.evictions.WaitFor(leases)
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
		c.evictions.Add(controller.Key(p))
	}
}

func (c *Controller) enqueueNodePods(node string) {
	pods, _ := c.pods.Store().ByIndex(podsByNode, node)
	for _, p := range pods {
		c.evictions.Add(controller.Key(p))
	}
}

// Run watches node health every monitor period and runs the taint eviction
// workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if !c.evictions.WaitForCaches(ctx) {
		return nil
	}
	c.log.Info("monitoring node health", "gracePeriod", c.cfg.GracePeriod, "period", c.cfg.MonitorPeriod, "evictionRate", c.cfg.EvictionRate)
	go controller.Every(ctx, c.cfg.MonitorPeriod, func(ctx context.Context) {
		if err := c.monitorNodeHealth(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("monitoring node health", "err", err)
		}
	})
	c.evictions.RunWorkers(ctx, workers)
	return nil
}

// monitorNodeHealth is one pass over every node: update its health, then,
// knowing the health of every zone, its taints. Errors of single nodes are
// collected; the next pass retries them.
func (c *Controller) monitorNodeHealth(ctx context.Context) error {
	type observedNode struct {
		node  *api.Node
		ready api.ConditionStatus
		zone  string
	}
	var errs []error
	var observed []observedNode
	zones := map[string]*zoneHealth{}
	for _, node := range c.nodes.Lister().List(labels.Everything()) {
		before, current, latest, err := c.tryUpdateNodeHealth(ctx, node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if before == api.ConditionTrue && current != api.ConditionTrue {
			c.recorder.Eventf(node, api.EventTypeNormal, "NodeNotReady", "Node %s status is now: %s", node.Name, "NodeNotReady")
			c.log.Info("node is not ready", "node", node.Name, "ready", current)
			if current == api.ConditionUnknown {
				if err := c.markPodsNotReady(ctx, node.Name); err != nil {
					errs = append(errs, err)
				}
			}
		}
		z := zoneKey(latest)
		if zones[z] == nil {
			zones[z] = &zoneHealth{}
		}
		zones[z].nodes++
		if current != api.ConditionTrue {
			zones[z].notReady++
		}
		observed = append(observed, observedNode{latest, current, z})
	}

	allDisrupted := len(zones) > 0
	for _, z := range zones {
		allDisrupted = allDisrupted && z.state(c.cfg.UnhealthyZoneThreshold) == zoneFullDisruption
	}
	if allDisrupted != c.allDisrupted {
		c.allDisrupted = allDisrupted
		if allDisrupted {
			c.log.Warn("Controller detected that all Nodes are not-Ready. Entering master disruption mode.")
		} else {
			c.log.Info("Controller detected that some Nodes are Ready. Exiting master disruption mode.")
			// Every node gets a fresh grace period, as kube does.
			c.mu.Lock()
			for _, h := range c.health {
				h.probeTimestamp = c.now()
			}
			c.mu.Unlock()
		}
	}
	for _, o := range observed {
		var lim *rate.Limiter
		if !allDisrupted {
			lim = c.zoneLimiter(o.zone, zones[o.zone])
		}
		if err := c.reconcileTaints(ctx, o.node, o.ready, allDisrupted, lim); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d node(s) failed, first: %w", len(errs), errs[0])
	}
	return nil
}

// zoneHealth counts a zone's nodes, as kube's ComputeZoneState.
type zoneHealth struct{ nodes, notReady int }

type zoneState int

const (
	zoneNormal zoneState = iota
	zonePartialDisruption
	zoneFullDisruption
)

func (z *zoneHealth) state(unhealthyThreshold float64) zoneState {
	switch {
	case z.notReady > 0 && z.notReady == z.nodes:
		return zoneFullDisruption
	case z.notReady > 2 && float64(z.notReady)/float64(z.nodes) >= unhealthyThreshold:
		return zonePartialDisruption
	}
	return zoneNormal
}

// zoneKey is a node's region and zone, as kube's GetZoneKey.
func zoneKey(n *api.Node) string {
	return n.Labels[api.LabelTopologyRegion] + ":\x00:" + n.Labels[api.LabelTopologyZone]
}

// zoneLimiter returns the zone's NoExecute tainting limiter at the rate its
// health calls for (kube's setLimiterInZone), nil when it must not taint.
func (c *Controller) zoneLimiter(zone string, z *zoneHealth) *rate.Limiter {
	qps := c.cfg.EvictionRate
	if z.state(c.cfg.UnhealthyZoneThreshold) == zonePartialDisruption {
		qps = 0
		if z.nodes > c.cfg.LargeClusterSize {
			qps = c.cfg.SecondaryEvictionRate
		}
	}
	if qps <= 0 {
		return nil
	}
	lim := c.zoneLimiters[zone]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(qps), 1)
		c.zoneLimiters[zone] = lim
	} else if lim.Limit() != rate.Limit(qps) {
		lim.SetLimit(rate.Limit(qps))
	}
	return lim
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
// and spec.unschedulable. Adding a NoExecute taint takes a token of lim
// (none when nil); in master disruption mode NoExecute taints are removed
// (kube's markNodeAsReachable). NoSchedule taints are not limited.
func (c *Controller) reconcileTaints(ctx context.Context, node *api.Node, ready api.ConditionStatus, disrupted bool, lim *rate.Limiter) error {
	name := node.Name
	var add, remove []api.Taint
	switch {
	case disrupted:
		remove = []api.Taint{UnreachableTaint, NotReadyTaint}
	case ready == api.ConditionUnknown:
		add, remove = []api.Taint{UnreachableTaint}, []api.Taint{NotReadyTaint}
	case ready == api.ConditionFalse:
		add, remove = []api.Taint{NotReadyTaint}, []api.Taint{UnreachableTaint}
	default:
		remove = []api.Taint{UnreachableTaint, NotReadyTaint}
	}
	now := c.now()
	addingNoExecute := len(add) > 0 && !hasTaint(node.Spec.Taints, add[0])
	if addingNoExecute && (lim == nil || !lim.AllowN(now, 1)) {
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
	pod := controller.Cached(c.pods, key)
	if pod == nil || pod.DeletionTimestamp != nil || pod.Spec.NodeName == "" {
		c.forget(key)
		return nil
	}
	node := controller.Cached(c.nodes, pod.Spec.NodeName)
	if node == nil {
		c.forget(key)
		return nil
	}
	taints := noExecuteTaints(node.Spec.Taints)
	d, forever, tolerated := tolerationTime(pod.Spec.Tolerations, taints)
	if len(taints) == 0 || (tolerated && forever) {
		if c.forget(key) {
			c.evictionRec.Eventf(pod, api.EventTypeNormal, "TaintManagerEviction", "Cancelling deletion of Pod %s", key)
		}
		return nil
	}
	now := c.now()
	if tolerated {
		deadline := c.taintedSince(key, taints, now).Add(d)
		if now.Before(deadline) {
			c.mu.Lock()
			c.scheduled[key] = true
			c.mu.Unlock()
			c.evictions.Queue.AddAfter(key, deadline.Sub(now))
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

// forget drops what the taint manager knew of a pod; true if an eviction
// was scheduled for it.
func (c *Controller) forget(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.firstSeen, key)
	was := c.scheduled[key]
	delete(c.scheduled, key)
	return was
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
