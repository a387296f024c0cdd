package disruption

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// DeletionTimeout is how long an eviction recorded in
// status.disruptedPods is awaited (kube's 2 minutes): a pod the eviction
// did not delete by then counts as healthy again.
const DeletionTimeout = 2 * time.Minute

// Controller keeps PodDisruptionBudget statuses.
type Controller struct {
	client  *client.Client
	pdbs    *informer.Informer[api.PodDisruptionBudget]
	pods    *informer.Informer[api.Pod]
	rss     *informer.Informer[api.ReplicaSet]
	deploys *informer.Informer[api.Deployment]
	sets    *informer.Informer[api.StatefulSet]
	rcs     *informer.Informer[api.ReplicationController]
	*controller.Loop[string]
	recorder events.Recorder
	log      *slog.Logger
	now      func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the "disruption" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, "disruption")
	if err != nil {
		return nil, err
	}
	c := NewController(ctx.Client,
		informer.Shared[api.PodDisruptionBudget](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Pod](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.ReplicaSet](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Deployment](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.StatefulSet](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.ReplicationController](ctx.Factory, "", client.ListOptions{}),
		ctx.Events.RecorderFor("controllermanager"), ctx.Logger)
	c.SetMetrics(m)
	return c, nil
}

// NewController wires the controller over its informers.
func NewController(c *client.Client, pdbs *informer.Informer[api.PodDisruptionBudget], pods *informer.Informer[api.Pod],
	rss *informer.Informer[api.ReplicaSet], deploys *informer.Informer[api.Deployment], sets *informer.Informer[api.StatefulSet],
	rcs *informer.Informer[api.ReplicationController], rec events.Recorder, log *slog.Logger) *Controller {
	ctl := &Controller{client: c, pdbs: pdbs, pods: pods, rss: rss, deploys: deploys, sets: sets, rcs: rcs,
		recorder: rec, log: log, now: time.Now}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "disruption", Sync: ctl.sync, Log: log})
	// A deleted budget needs no sync: nothing is kept for it.
	budgets := controller.QueueKeys[api.PodDisruptionBudget](ctl.Loop)
	budgets.OnDelete = nil
	controller.Watch(ctl.Loop, pdbs, budgets)
	controller.Watch(ctl.Loop, pods, informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) { ctl.enqueueFor(p) },
		OnUpdate: func(old, p *api.Pod) {
			ctl.enqueueFor(p)
			if !reflect.DeepEqual(old.Labels, p.Labels) {
				ctl.enqueueFor(old)
			}
		},
		OnDelete: func(p *api.Pod, _ bool) { ctl.enqueueFor(p) },
	})
	// The pods' controllers are read for their scale, their events ignored.
	ctl.WaitFor(rss, deploys, sets, rcs)
	return ctl
}

// enqueueFor enqueues the budgets whose selector matches pod (the rules
// of selectorOf).
func (c *Controller) enqueueFor(pod *api.Pod) {
	for _, pdb := range controller.Selecting(c.pdbs.Lister().Namespace(pod.Namespace), budgetSelector, pod.Labels) {
		c.Add(controller.Key(pdb))
	}
}

func budgetSelector(pdb *api.PodDisruptionBudget) *api.LabelSelector { return pdb.Spec.Selector }

// selectorOf is the budget's pod selector; a missing or empty selector
// matches no pod in policy/v1.
func selectorOf(pdb *api.PodDisruptionBudget) (labels.Selector, bool) {
	if pdb.Spec.Selector == nil {
		return nil, false
	}
	sel, err := labels.SelectorFromLabelSelector(pdb.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil, false
	}
	return sel, true
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.pdbs.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pdb := api.DeepCopy(cached)
	var pods []*api.Pod
	if sel, ok := selectorOf(pdb); ok {
		pods = c.pods.Lister().Namespace(ns).List(sel)
	}
	if len(pods) == 0 {
		c.recorder.Event(pdb, api.EventTypeNormal, "NoPods", "No matching pods found")
	}
	expected, desired, err := c.expectations(pdb, pods)
	if err != nil {
		c.recorder.Eventf(pdb, api.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return c.failSafe(ctx, pdb, err)
	}
	now := c.now()
	disrupted, recheck := c.disruptedPods(pdb, pods, now)
	healthy := countHealthy(pods, disrupted, now)
	return c.updateStatus(ctx, pdb, healthy, desired, expected, disrupted, recheck)
}

// expectations computes expectedPods and desiredHealthy: an integer
// minAvailable counts the matching pods; a percentage, or maxUnavailable,
// reads the scale of the pods' controllers.
func (c *Controller) expectations(pdb *api.PodDisruptionBudget, pods []*api.Pod) (expected, desired int32, err error) {
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		expected, err = c.expectedScale(pdb, pods)
		if err != nil {
			return 0, 0, err
		}
		maxUnavailable, err := controller.ScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		desired = max(expected-int32(maxUnavailable), 0)
	case pdb.Spec.MinAvailable != nil && pdb.Spec.MinAvailable.Type == api.Int:
		desired = pdb.Spec.MinAvailable.IntVal
		expected = int32(len(pods))
	case pdb.Spec.MinAvailable != nil:
		expected, err = c.expectedScale(pdb, pods)
		if err != nil {
			return 0, 0, err
		}
		minAvailable, err := controller.ScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		desired = int32(minAvailable)
	}
	return expected, desired, nil
}

// expectedScale sums the scale of the controllers of pods, each counted
// once; a pod without a controller, or with one that has no scale, makes
// the budget unusable as kube's does.
func (c *Controller) expectedScale(pdb *api.PodDisruptionBudget, pods []*api.Pod) (int32, error) {
	seen := map[api.UID]int32{}
	for _, pod := range pods {
		ref := api.GetControllerOf(&pod.ObjectMeta)
		if ref == nil {
			return 0, fmt.Errorf("found no controller ref for pod %q", pod.Name)
		}
		uid, scale, ok := c.scaleOf(pod.Namespace, ref)
		if !ok {
			return 0, fmt.Errorf("found no controllers for pod %q", pod.Name)
		}
		seen[uid] = scale
	}
	var total int32
	for _, n := range seen {
		total += n
	}
	return total, nil
}

// scaleOf finds the scale of the controller ref names, following a
// ReplicaSet to the Deployment that controls it, as kube's finders do.
func (c *Controller) scaleOf(ns string, ref *api.OwnerReference) (api.UID, int32, bool) {
	replicas := func(r *int32) int32 {
		if r == nil {
			return 1
		}
		return *r
	}
	switch {
	case ref.Kind == "ReplicaSet" && groupOf(ref.APIVersion) == "apps":
		rs, err := c.rss.Lister().Namespace(ns).Get(ref.Name)
		if err != nil || rs.UID != ref.UID {
			return "", 0, false
		}
		if owner := api.GetControllerOf(&rs.ObjectMeta); owner != nil && owner.Kind == "Deployment" && groupOf(owner.APIVersion) == "apps" {
			d, err := c.deploys.Lister().Namespace(ns).Get(owner.Name)
			if err != nil || d.UID != owner.UID {
				return "", 0, false
			}
			return d.UID, replicas(d.Spec.Replicas), true
		}
		return rs.UID, replicas(rs.Spec.Replicas), true
	case ref.Kind == "StatefulSet" && groupOf(ref.APIVersion) == "apps":
		s, err := c.sets.Lister().Namespace(ns).Get(ref.Name)
		if err != nil || s.UID != ref.UID {
			return "", 0, false
		}
		return s.UID, replicas(s.Spec.Replicas), true
	case ref.Kind == "ReplicationController" && ref.APIVersion == "v1":
		rc, err := c.rcs.Lister().Namespace(ns).Get(ref.Name)
		if err != nil || rc.UID != ref.UID {
			return "", 0, false
		}
		return rc.UID, replicas(rc.Spec.Replicas), true
	}
	return "", 0, false
}

func groupOf(apiVersion string) string {
	for i := range apiVersion {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

// disruptedPods keeps the evictions still awaited: a pod gone or being
// deleted is forgotten, and so is one whose eviction timed out. recheck is
// when the earliest remaining entry times out.
func (c *Controller) disruptedPods(pdb *api.PodDisruptionBudget, pods []*api.Pod, now time.Time) (map[string]api.Time, time.Duration) {
	if len(pdb.Status.DisruptedPods) == 0 {
		return nil, 0
	}
	byName := map[string]*api.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	out := map[string]api.Time{}
	var recheck time.Duration
	for name, at := range pdb.Status.DisruptedPods {
		p := byName[name]
		if p == nil || p.DeletionTimestamp != nil {
			continue
		}
		expires := at.Time.Add(DeletionTimeout)
		if !now.Before(expires) {
			c.recorder.Eventf(p, api.EventTypeWarning, "NotDeleted", "Pod was expected by PDB %s/%s to be deleted but it wasn't", pdb.Namespace, pdb.Name)
			continue
		}
		if d := expires.Sub(now); recheck == 0 || d < recheck {
			recheck = d
		}
		out[name] = at
	}
	if len(out) == 0 {
		return nil, 0
	}
	return out, recheck
}

// countHealthy counts the ready pods not being deleted nor awaiting an
// eviction.
func countHealthy(pods []*api.Pod, disrupted map[string]api.Time, now time.Time) int32 {
	var n int32
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if _, ok := disrupted[p.Name]; ok {
			continue
		}
		if controller.IsPodReady(p) {
			n++
		}
	}
	return n
}

func (c *Controller) updateStatus(ctx context.Context, pdb *api.PodDisruptionBudget, healthy, desired, expected int32, disrupted map[string]api.Time, recheck time.Duration) error {
	allowed := max(healthy-desired, 0)
	if expected <= 0 {
		// kube: nothing is expected, so nothing may be disrupted.
		allowed = 0
	}
	st := pdb.Status
	st.CurrentHealthy, st.DesiredHealthy, st.ExpectedPods = healthy, desired, expected
	st.DisruptionsAllowed = allowed
	st.DisruptedPods = disrupted
	st.ObservedGeneration = pdb.Generation
	st.Conditions = append([]api.Condition(nil), pdb.Status.Conditions...)
	if allowed > 0 {
		st.Conditions = setCondition(st.Conditions, pdb.Generation, api.ConditionTrue, "SufficientPods", "", c.now())
	} else {
		st.Conditions = setCondition(st.Conditions, pdb.Generation, api.ConditionFalse, "InsufficientPods", "", c.now())
	}
	if recheck > 0 {
		c.Queue.AddAfter(cache.MetaNamespaceKeyFunc(pdb), recheck)
	}
	return c.write(ctx, pdb, st)
}

// failSafe refuses every disruption while the budget cannot be computed.
func (c *Controller) failSafe(ctx context.Context, pdb *api.PodDisruptionBudget, cause error) error {
	st := pdb.Status
	st.DisruptionsAllowed = 0
	st.ObservedGeneration = pdb.Generation
	st.Conditions = setCondition(append([]api.Condition(nil), pdb.Status.Conditions...), pdb.Generation, api.ConditionFalse, "SyncFailed", cause.Error(), c.now())
	if err := c.write(ctx, pdb, st); err != nil {
		return errors.Join(cause, err)
	}
	return nil
}

func (c *Controller) write(ctx context.Context, pdb *api.PodDisruptionBudget, st api.PodDisruptionBudgetStatus) error {
	if reflect.DeepEqual(st, pdb.Status) {
		return nil
	}
	pdb.Status = st
	if _, err := client.Resource[api.PodDisruptionBudget](c.client).Namespace(pdb.Namespace).UpdateStatus(ctx, pdb); err != nil {
		return fmt.Errorf("update status of pdb %s/%s: %w", pdb.Namespace, pdb.Name, err)
	}
	return nil
}

// setCondition sets the DisruptionAllowed condition, keeping its
// transition time while its status holds.
func setCondition(conds []api.Condition, gen int64, status, reason, msg string, now time.Time) []api.Condition {
	c := api.Condition{Type: "DisruptionAllowed", Status: status, Reason: reason, Message: msg,
		ObservedGeneration: gen, LastTransitionTime: api.NewTime(now)}
	for i := range conds {
		if conds[i].Type == c.Type {
			if conds[i].Status == c.Status {
				c.LastTransitionTime = conds[i].LastTransitionTime
			}
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}
