package daemonset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/history"
	"github.com/minik8s/minik8s/internal/backoff"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

const (
	// Name is the controller's name in --controllers.
	Name = "daemonset"
	// Component is the events' source.
	Component = "daemonset-controller"
	// DefaultRevisionHistoryLimit is kube's default.
	DefaultRevisionHistoryLimit = 10
	// burstReplicas caps the pods created or deleted in one sync (kube's 250).
	burstReplicas = 250
	// FailedDaemonPodReason is the event of a failed daemon pod's deletion.
	FailedDaemonPodReason = "FailedDaemonPod"
	// Kube's failedPodsBackoff: a node's failed daemon pods are deleted
	// (and so replaced) at most after 1 s, 2 s, 4 s ... up to 15 minutes.
	failedPodBackoffInitial = time.Second
	failedPodBackoffMax     = 15 * time.Minute
	// backoffGCInterval is how often idle back-off entries are dropped.
	backoffGCInterval = time.Minute
)

var dsKind = struct{ APIVersion, Kind string }{"apps/v1", "DaemonSet"}

// Controller is the DaemonSet controller.
type Controller struct {
	client       *client.Client
	pods         *informer.Informer[api.Pod]
	nodes        *informer.Informer[api.Node]
	dss          *informer.Informer[api.DaemonSet]
	revs         *informer.Informer[api.ControllerRevision]
	podControl   controller.PodControl
	recorder     events.Recorder
	history      history.Client
	expectations *controller.Expectations
	owners       controller.Owners[api.DaemonSet]
	*controller.Loop[string]
	log *slog.Logger
	now func() time.Time
	// failedPods paces the replacement of failed daemon pods per
	// DaemonSet, generation and node, so that a pod failing at once (a
	// node rejecting it, say) is not re-created in a tight loop.
	failedPods *backoff.Backoff
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller-manager's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, Name)
	if err != nil {
		return nil, err
	}
	c := ctx.Client
	rec := ctx.Events.RecorderFor(Component)
	return NewController(c, ctx.Factory, controller.RealPodControl{Client: c, Recorder: rec}, rec, ctx.Logger, m)
}

// NewController builds the controller on factory's shared informers.
func NewController(c *client.Client, factory *informer.Factory, podControl controller.PodControl, rec events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	dsc := &Controller{
		client:       c,
		pods:         informer.Shared[api.Pod](factory, "", client.ListOptions{}),
		nodes:        informer.Shared[api.Node](factory, "", client.ListOptions{}),
		dss:          informer.Shared[api.DaemonSet](factory, "", client.ListOptions{}),
		revs:         informer.Shared[api.ControllerRevision](factory, "", client.ListOptions{}),
		podControl:   podControl,
		recorder:     rec,
		history:      history.Client{Client: c},
		expectations: controller.NewExpectations(),
		log:          log,
		now:          time.Now,
		failedPods:   backoff.New(failedPodBackoffInitial, failedPodBackoffMax, 0),
	}
	dsc.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: Name, Sync: dsc.sync, Log: log, Metrics: m})
	dsc.owners = controller.NewOwners(dsc.dss, dsKind.APIVersion, dsKind.Kind,
		func(ds *api.DaemonSet) *api.LabelSelector { return ds.Spec.Selector })
	if err := controller.AddControllerUIDIndex(dsc.pods); err != nil {
		return nil, err
	}
	if err := controller.AddControllerUIDIndex(dsc.revs); err != nil {
		return nil, err
	}
	controller.Watch(dsc.Loop, dsc.dss, controller.QueueKeysForgetting[api.DaemonSet](dsc.Loop, dsc.expectations.Delete))
	controller.Watch(dsc.Loop, dsc.pods, informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) {
			dsc.owners.Each(&p.ObjectMeta, func(ds *api.DaemonSet, controls bool) {
				key := controller.Key(ds)
				if controls {
					dsc.expectations.CreationObserved(key)
				}
				dsc.Add(key)
			})
		},
		OnUpdate: func(old, cur *api.Pod) {
			if old.ResourceVersion == cur.ResourceVersion {
				return
			}
			for _, p := range []*api.Pod{old, cur} {
				dsc.owners.Each(&p.ObjectMeta, func(ds *api.DaemonSet, controls bool) {
					dsc.Add(controller.Key(ds))
					// A pod that became ready becomes available minReadySeconds later.
					if after, ok := controller.AvailableAfter(old, cur, ds.Spec.MinReadySeconds); ok && controls {
						dsc.Queue.AddAfter(controller.Key(ds), after)
					}
				})
			}
			if cur.DeletionTimestamp != nil {
				dsc.podGone(cur)
			}
		},
		OnDelete: func(p *api.Pod, _ bool) { dsc.podGone(p) },
	})
	controller.Watch(dsc.Loop, dsc.nodes, informer.Handler[api.Node]{
		OnAdd: func(*api.Node, bool) { dsc.enqueueAll() },
		OnUpdate: func(old, cur *api.Node) {
			if !reflect.DeepEqual(old.Labels, cur.Labels) || !reflect.DeepEqual(old.Spec.Taints, cur.Spec.Taints) {
				dsc.enqueueAll()
			}
		},
		OnDelete: func(*api.Node, bool) { dsc.enqueueAll() },
	})
	// Revisions are read by the sync, their events ignored.
	dsc.WaitFor(dsc.revs)
	return dsc, nil
}

// Run implements controller.Interface: the workers, and beside them the
// periodic drop of idle failed-pod back-offs.
func (dsc *Controller) Run(ctx context.Context, workers int) error {
	if !dsc.WaitForCaches(ctx) {
		return nil
	}
	dsc.log.Info("daemonset controller started", "workers", workers)
	go func() {
		t := time.NewTicker(backoffGCInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				dsc.failedPods.GC()
			}
		}
	}()
	dsc.RunWorkers(ctx, workers)
	return nil
}

func (dsc *Controller) enqueueAll() {
	for _, ds := range dsc.dss.Lister().List(nil) {
		dsc.Add(controller.Key(ds))
	}
}

// podGone observes the deletion of a daemon pod, deleted or terminating.
func (dsc *Controller) podGone(p *api.Pod) {
	if ds := dsc.owners.ControllerOf(&p.ObjectMeta); ds != nil {
		key := controller.Key(ds)
		dsc.expectations.DeletionObserved(key, controller.PodKey(p))
		dsc.Add(key)
	}
}

// sync reconciles one DaemonSet.
func (dsc *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ds, err := dsc.dss.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		dsc.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	selector, err := labels.SelectorFromLabelSelector(ds.Spec.Selector)
	if err != nil || selector.Empty() {
		return nil
	}
	canAdopt := controller.RecheckDeletionOf[api.DaemonSet](dsc.client, &ds.ObjectMeta)
	revs, err := controller.NewRefManager[api.ControllerRevision](dsc.client, &ds.ObjectMeta, dsKind.APIVersion, dsKind.Kind, selector, canAdopt).
		Claim(ctx, controller.OwnedOrOrphans(dsc.revs, &ds.ObjectMeta))
	if err != nil {
		return err
	}
	pods, err := controller.NewRefManager[api.Pod](dsc.client, &ds.ObjectMeta, dsKind.APIVersion, dsKind.Kind, selector, canAdopt).
		Claim(ctx, controller.OwnedOrOrphans(dsc.pods, &ds.ObjectMeta))
	if err != nil {
		return err
	}
	if ds.DeletionTimestamp != nil {
		return nil
	}
	ds = api.DeepCopy(ds)
	var collisionCount int32
	if ds.Status.CollisionCount != nil {
		collisionCount = *ds.Status.CollisionCount
	}
	ref := controller.NewControllerRef(&ds.ObjectMeta, dsKind.APIVersion, dsKind.Kind)
	cur, err := dsc.history.Reconcile(ctx, &ds.ObjectMeta, ref, &ds.Spec.Template, revs, &collisionCount)
	if err != nil {
		return err
	}
	hash := cur.Labels[history.HashLabel]
	byNode := map[string][]*api.Pod{}
	for _, p := range pods {
		if n := targetNode(p); n != "" {
			byNode[n] = append(byNode[n], p)
		}
	}
	nodes := dsc.nodes.Lister().List(nil)
	var syncErr error
	if dsc.expectations.Satisfied(key) {
		syncErr = dsc.manage(ctx, ds, nodes, byNode, hash)
	}
	if syncErr == nil && dsc.expectations.Satisfied(key) && ds.Spec.UpdateStrategy.Type != "OnDelete" {
		syncErr = dsc.rollingUpdate(ctx, ds, nodes, byNode, hash)
	}
	if syncErr == nil {
		live := map[string]bool{cur.Name: true}
		for _, p := range pods {
			live[history.Name(ds.Name, p.Labels[history.HashLabel])] = true
		}
		limit := DefaultRevisionHistoryLimit
		if ds.Spec.RevisionHistoryLimit != nil {
			limit = int(*ds.Spec.RevisionHistoryLimit)
		}
		syncErr = dsc.history.Truncate(ctx, revs, live, limit)
	}
	if err := dsc.updateStatus(ctx, ds, nodes, byNode, hash, collisionCount); err != nil {
		return errors.Join(syncErr, err)
	}
	return syncErr
}

// manage creates the missing daemon pods and deletes those on nodes that
// should not run them, failed ones, and duplicates.
func (dsc *Controller) manage(ctx context.Context, ds *api.DaemonSet, nodes []*api.Node, byNode map[string][]*api.Pod, hash string) error {
	surge := maxSurge(ds, len(nodes)) > 0
	var create []string
	var del []*api.Pod
	known := map[string]bool{}
	for _, node := range nodes {
		known[node.Name] = true
		shouldRun, shouldContinue := nodeShouldRunDaemonPod(ds, node)
		pods := byNode[node.Name]
		switch {
		case shouldRun && len(pods) == 0:
			create = append(create, node.Name)
		case shouldContinue:
			// Failed pods are deleted, and replaced once they are gone,
			// no faster than the node's back-off allows.
			var live []*api.Pod
			for _, p := range pods {
				switch {
				case p.DeletionTimestamp != nil:
				case p.Status.Phase == api.PodFailed:
					if dsc.failedPodMayGo(ds, node.Name, p) {
						del = append(del, p)
					}
				default:
					live = append(live, p)
				}
			}
			del = append(del, duplicates(live, hash, surge)...)
		default:
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					del = append(del, p)
				}
			}
		}
	}
	// Pods of nodes that left.
	for node, pods := range byNode {
		if !known[node] {
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					del = append(del, p)
				}
			}
		}
	}
	return dsc.createAndDelete(ctx, ds, create, del, hash)
}

// failedPodMayGo applies kube's failedPodsBackoff to a failed daemon pod
// of node: inside the back-off the DaemonSet is looked at again when it
// ends; past it, the back-off grows and the pod goes, with kube's warning.
//
// The back-off starts over when the spec changes. Kube keys it on
// status.observedGeneration, which also starts it over the first time the
// controller's own status write reaches its cache, so a pod failing right
// after creation could be replaced twice at once; the spec's generation
// has no such step.
func (dsc *Controller) failedPodMayGo(ds *api.DaemonSet, node string, p *api.Pod) bool {
	key := fmt.Sprintf("%s/%d/%s", ds.UID, ds.Generation, node)
	if in, left := dsc.failedPods.InBackoffSinceUpdate(key); in {
		dsc.Queue.AddAfter(cache.MetaNamespaceKeyFunc(ds), left)
		return false
	}
	dsc.failedPods.Next(key, dsc.failedPods.Now())
	dsc.recorder.Eventf(ds, api.EventTypeWarning, FailedDaemonPodReason, "Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node)
	return true
}

// duplicates are the pods of one node to delete beyond the one kept: the
// oldest; with surge, an old pod waiting for its replacement stays too.
func duplicates(pods []*api.Pod, hash string, surge bool) []*api.Pod {
	if len(pods) <= 1 {
		return nil
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].CreationTimestamp.Time.Before(pods[j].CreationTimestamp.Time) })
	if !surge {
		return pods[1:]
	}
	var oldPods, newPods []*api.Pod
	for _, p := range pods {
		if p.Labels[history.HashLabel] == hash {
			newPods = append(newPods, p)
		} else {
			oldPods = append(oldPods, p)
		}
	}
	var out []*api.Pod
	if len(newPods) > 1 {
		out = append(out, newPods[1:]...)
	}
	if len(oldPods) > 1 {
		out = append(out, oldPods[1:]...)
	}
	return out
}

// createAndDelete creates a pod on each of nodes and deletes del, at most
// burstReplicas of each, recording the expectations.
func (dsc *Controller) createAndDelete(ctx context.Context, ds *api.DaemonSet, nodes []string, del []*api.Pod, hash string) error {
	key := cache.MetaNamespaceKeyFunc(ds)
	nodes = nodes[:min(len(nodes), burstReplicas)]
	del = del[:min(len(del), burstReplicas)]
	if len(nodes) == 0 && len(del) == 0 {
		return nil
	}
	podKeys := make([]string, len(del))
	for i, p := range del {
		podKeys[i] = controller.PodKey(p)
	}
	dsc.expectations.Expect(key, len(nodes), podKeys)
	ref := controller.NewControllerRef(&ds.ObjectMeta, dsKind.APIVersion, dsKind.Kind)
	var wg sync.WaitGroup
	errs := make([]error, len(nodes)+len(del))
	for i, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dsc.podControl.CreatePod(ctx, ds.Namespace, podTemplate(ds, hash, node), ds, ref); err != nil {
				dsc.expectations.CreationObserved(key)
				errs[i] = err
			}
		}()
	}
	for i, p := range del {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dsc.podControl.DeletePod(ctx, ds.Namespace, p.Name, ds); err != nil {
				dsc.expectations.DeletionObserved(key, controller.PodKey(p))
				if !apierrors.IsNotFound(err) {
					errs[len(nodes)+i] = err
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func maxSurge(ds *api.DaemonSet, n int) int {
	if ds.Spec.UpdateStrategy.Type != "RollingUpdate" || ds.Spec.UpdateStrategy.RollingUpdate == nil {
		return 0
	}
	v, _ := controller.ScaledValueFromIntOrPercent(ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge, n, true)
	return v
}

func maxUnavailable(ds *api.DaemonSet, n int) int {
	if ds.Spec.UpdateStrategy.RollingUpdate == nil || ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable == nil {
		return 1
	}
	v, _ := controller.ScaledValueFromIntOrPercent(ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable, n, false)
	if v == 0 && maxSurge(ds, n) == 0 {
		return 1
	}
	return v
}

// rollingUpdate replaces old pods, as kube's rollingUpdate: without surge
// it deletes old pods while at most maxUnavailable nodes lack an available
// pod; with surge it starts new pods beside available old ones (at most
// maxSurge at once) and deletes an old pod once its replacement is
// available.
func (dsc *Controller) rollingUpdate(ctx context.Context, ds *api.DaemonSet, nodes []*api.Node, byNode map[string][]*api.Pod, hash string) error {
	now := dsc.now()
	var desired []string
	for _, node := range nodes {
		if shouldRun, _ := nodeShouldRunDaemonPod(ds, node); shouldRun {
			desired = append(desired, node.Name)
		}
	}
	sort.Strings(desired)
	surge, unavailableBudget := maxSurge(ds, len(desired)), maxUnavailable(ds, len(desired))
	available := func(p *api.Pod) bool {
		return p.DeletionTimestamp == nil && controller.IsPodAvailable(p, ds.Spec.MinReadySeconds, now)
	}
	var del []*api.Pod
	var create []string
	if surge == 0 {
		unavailable := 0
		var candidates []*api.Pod
		for _, n := range desired {
			var oldPod, newPod *api.Pod
			for _, p := range byNode[n] {
				if p.DeletionTimestamp != nil {
					continue
				}
				if p.Labels[history.HashLabel] == hash {
					newPod = p
				} else {
					oldPod = p
				}
			}
			switch {
			case newPod != nil:
				if !available(newPod) {
					unavailable++
				}
			case oldPod == nil:
				unavailable++
			case !available(oldPod):
				unavailable++
				del = append(del, oldPod) // unavailable anyway
			default:
				candidates = append(candidates, oldPod)
			}
		}
		for _, p := range candidates {
			if unavailable >= unavailableBudget {
				break
			}
			del = append(del, p)
			unavailable++
		}
		return dsc.createAndDelete(ctx, ds, nil, del, hash)
	}
	surging := 0
	var toSurge []string
	for _, n := range desired {
		var oldPod, newPod *api.Pod
		for _, p := range byNode[n] {
			if p.DeletionTimestamp != nil {
				continue
			}
			if p.Labels[history.HashLabel] == hash {
				newPod = p
			} else {
				oldPod = p
			}
		}
		switch {
		case oldPod == nil:
		case newPod == nil && !available(oldPod):
			del = append(del, oldPod)
		case newPod == nil:
			toSurge = append(toSurge, n)
		case available(newPod):
			del = append(del, oldPod)
		default:
			surging++
		}
	}
	for _, n := range toSurge {
		if surging >= surge {
			break
		}
		create = append(create, n)
		surging++
	}
	return dsc.createAndDelete(ctx, ds, create, del, hash)
}

// updateStatus writes kube's counts, per node.
func (dsc *Controller) updateStatus(ctx context.Context, ds *api.DaemonSet, nodes []*api.Node, byNode map[string][]*api.Pod, hash string, collisionCount int32) error {
	now := dsc.now()
	st := api.DaemonSetStatus{ObservedGeneration: ds.Generation, Conditions: ds.Status.Conditions}
	if collisionCount != 0 || ds.Status.CollisionCount != nil {
		st.CollisionCount = &collisionCount
	}
	for _, node := range nodes {
		shouldRun, _ := nodeShouldRunDaemonPod(ds, node)
		var scheduled []*api.Pod
		for _, p := range byNode[node.Name] {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				scheduled = append(scheduled, p)
			}
		}
		if shouldRun {
			st.DesiredNumberScheduled++
		}
		if len(scheduled) == 0 {
			continue
		}
		if !shouldRun {
			st.NumberMisscheduled++
			continue
		}
		st.CurrentNumberScheduled++
		// The newest pod stands for the node.
		sort.Slice(scheduled, func(i, j int) bool {
			return scheduled[i].CreationTimestamp.Time.After(scheduled[j].CreationTimestamp.Time)
		})
		p := scheduled[0]
		if controller.IsPodReady(p) {
			st.NumberReady++
			if controller.IsPodAvailable(p, ds.Spec.MinReadySeconds, now) {
				st.NumberAvailable++
			}
		}
		if p.Labels[history.HashLabel] == hash {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = max(st.DesiredNumberScheduled-st.NumberAvailable, 0)
	if reflect.DeepEqual(ds.Status, st) {
		return nil
	}
	dc := client.Resource[api.DaemonSet](dsc.client).Namespace(ds.Namespace)
	for i := 0; ; i++ {
		ds.Status = st
		_, err := dc.UpdateStatus(ctx, ds)
		if err == nil || apierrors.IsNotFound(err) {
			break
		}
		if !apierrors.IsConflict(err) || i >= 3 {
			return err
		}
		if ds, err = dc.Get(ctx, ds.Name); err != nil {
			return err
		}
		st.ObservedGeneration = ds.Generation
	}
	if ds.Spec.MinReadySeconds > 0 && st.NumberReady != st.NumberAvailable {
		dsc.Queue.AddAfter(cache.MetaNamespaceKeyFunc(ds), time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return nil
}
