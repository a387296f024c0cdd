package replicaset

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
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
)

const (
	// Name is the controller's name in --controllers.
	Name = "replicaset"
	// Component is the events' source.
	Component = "replicaset-controller"
	// BurstReplicas caps the pods created or deleted in one sync (kube's 500).
	BurstReplicas = 500
	// SlowStartInitialBatchSize is the first batch of creates; each
	// successful batch doubles the next.
	SlowStartInitialBatchSize = 1
	// statusUpdateRetries is how often a status write is retried after a
	// fresh GET.
	statusUpdateRetries = 1
)

var rsKind = struct{ APIVersion, Kind string }{"apps/v1", "ReplicaSet"}

// Controller is the ReplicaSet controller.
type Controller struct {
	client       *client.Client
	pods         *informer.Informer[api.Pod]
	rss          *informer.Informer[api.ReplicaSet]
	podControl   controller.PodControl
	expectations *controller.Expectations
	queue        *workqueue.RateLimitingQueue[string]
	log          *slog.Logger
	metrics      *controller.SyncMetrics
	burst        int
	now          func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller-manager's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, Name)
	if err != nil {
		return nil, err
	}
	c := ctx.Client
	return NewController(c, ctx.Factory, controller.RealPodControl{Client: c, Recorder: ctx.Events.RecorderFor(Component)}, ctx.Logger, m)
}

// NewController builds the controller on factory's shared pod and
// ReplicaSet informers.
func NewController(c *client.Client, factory *informer.Factory, podControl controller.PodControl, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	rsc := &Controller{
		client:       c,
		pods:         informer.Shared[api.Pod](factory, "", client.ListOptions{}),
		rss:          informer.Shared[api.ReplicaSet](factory, "", client.ListOptions{}),
		podControl:   podControl,
		expectations: controller.NewExpectations(),
		queue:        workqueue.NewRateLimiting[string](nil, workqueue.WithName(Name)),
		log:          log,
		metrics:      m,
		burst:        BurstReplicas,
		now:          time.Now,
	}
	if err := controller.AddControllerUIDIndex(rsc.pods); err != nil {
		return nil, err
	}
	if err := controller.AddControllerUIDIndex(rsc.rss); err != nil {
		return nil, err
	}
	rsc.rss.AddEventHandler(informer.Handler[api.ReplicaSet]{
		OnAdd:    func(rs *api.ReplicaSet, _ bool) { rsc.enqueue(rs) },
		OnUpdate: func(_, rs *api.ReplicaSet) { rsc.enqueue(rs) },
		OnDelete: func(rs *api.ReplicaSet, _ bool) {
			key := cache.MetaNamespaceKeyFunc(rs)
			rsc.expectations.Delete(key)
			rsc.queue.Add(key)
		},
	})
	rsc.pods.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, _ bool) { rsc.addPod(p) },
		OnUpdate: rsc.updatePod,
		OnDelete: func(p *api.Pod, _ bool) { rsc.deletePod(p) },
	})
	return rsc, nil
}

// Run implements controller.Interface.
func (rsc *Controller) Run(ctx context.Context, workers int) error {
	if !informer.WaitForCacheSync(ctx, rsc.pods, rsc.rss) {
		return nil
	}
	rsc.log.Info("replicaset controller started", "workers", workers)
	controller.RunWorkers(ctx, rsc.queue, workers, rsc.log, controller.Instrument(rsc.metrics, rsc.sync))
	return nil
}

func (rsc *Controller) enqueue(rs *api.ReplicaSet) { rsc.queue.Add(cache.MetaNamespaceKeyFunc(rs)) }

// resolve returns the ReplicaSet ref points to, if it is one and still
// the same object.
func (rsc *Controller) resolve(namespace string, ref *api.OwnerReference) *api.ReplicaSet {
	return controller.ResolveControllerRef(rsc.rss.Lister().Namespace(namespace), ref, rsKind.APIVersion, rsKind.Kind)
}

// podReplicaSets returns the ReplicaSets whose selector matches an orphan.
func (rsc *Controller) podReplicaSets(pod *api.Pod) []*api.ReplicaSet {
	var out []*api.ReplicaSet
	for _, rs := range rsc.rss.Lister().Namespace(pod.Namespace).List(nil) {
		sel, err := labels.SelectorFromLabelSelector(rs.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, rs)
	}
	return out
}

func (rsc *Controller) addPod(pod *api.Pod) {
	if pod.DeletionTimestamp != nil {
		// Seen first already terminating (a re-list): count it as gone.
		rsc.deletePod(pod)
		return
	}
	if ref := api.GetControllerOf(&pod.ObjectMeta); ref != nil {
		rs := rsc.resolve(pod.Namespace, ref)
		if rs == nil {
			return
		}
		key := cache.MetaNamespaceKeyFunc(rs)
		rsc.expectations.CreationObserved(key)
		rsc.queue.Add(key)
		return
	}
	for _, rs := range rsc.podReplicaSets(pod) {
		rsc.enqueue(rs)
	}
}

func (rsc *Controller) updatePod(old, cur *api.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		return // a resync
	}
	labelsChanged := !reflect.DeepEqual(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		// Graceful deletion: the pod is gone for us as soon as it is
		// terminating, so a replacement is made without waiting.
		rsc.deletePod(cur)
		if labelsChanged {
			rsc.deletePod(old)
		}
		return
	}
	curRef, oldRef := api.GetControllerOf(&cur.ObjectMeta), api.GetControllerOf(&old.ObjectMeta)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := rsc.resolve(old.Namespace, oldRef); rs != nil {
			rsc.enqueue(rs)
		}
	}
	if curRef != nil {
		rs := rsc.resolve(cur.Namespace, curRef)
		if rs == nil {
			return
		}
		rsc.enqueue(rs)
		// A pod that became ready becomes available minReadySeconds later.
		if !controller.IsPodReady(old) && controller.IsPodReady(cur) && rs.Spec.MinReadySeconds > 0 {
			rsc.queue.AddAfter(cache.MetaNamespaceKeyFunc(rs), time.Duration(rs.Spec.MinReadySeconds)*time.Second+time.Second)
		}
		return
	}
	if labelsChanged || refChanged {
		for _, rs := range rsc.podReplicaSets(cur) {
			rsc.enqueue(rs)
		}
	}
}

func (rsc *Controller) deletePod(pod *api.Pod) {
	ref := api.GetControllerOf(&pod.ObjectMeta)
	if ref == nil {
		return
	}
	rs := rsc.resolve(pod.Namespace, ref)
	if rs == nil {
		return
	}
	key := cache.MetaNamespaceKeyFunc(rs)
	rsc.expectations.DeletionObserved(key, controller.PodKey(pod))
	rsc.queue.Add(key)
}

// sync reconciles one ReplicaSet: claim pods, create or delete the
// difference (unless earlier creates/deletes are still unobserved), then
// write the status.
func (rsc *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	rs, err := rsc.rss.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		rsc.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	needsSync := rsc.expectations.Satisfied(key)
	selector, err := labels.SelectorFromLabelSelector(rs.Spec.Selector)
	if err != nil {
		rsc.log.Warn("invalid selector", "replicaset", key, "err", err)
		return nil
	}
	pods := controller.FilterActivePods(controller.OwnedOrOrphans(rsc.pods, &rs.ObjectMeta))
	pods, err = rsc.claimPods(ctx, rs, selector, pods)
	if err != nil {
		return err
	}
	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = rsc.manageReplicas(ctx, pods, rs)
	}
	rs = api.DeepCopy(rs)
	status := calculateStatus(rs, pods, manageErr, rsc.now())
	updated, err := rsc.updateStatus(ctx, rs, status)
	if err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && updated.Spec.MinReadySeconds > 0 && updated.Status.ReadyReplicas == replicas(updated) &&
		updated.Status.AvailableReplicas != replicas(updated) {
		rsc.queue.AddAfter(key, time.Duration(updated.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

func replicas(rs *api.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func (rsc *Controller) claimPods(ctx context.Context, rs *api.ReplicaSet, selector labels.Selector, pods []*api.Pod) ([]*api.Pod, error) {
	canAdopt := controller.RecheckDeletion(func(ctx context.Context) (*api.ObjectMeta, error) {
		fresh, err := client.Resource[api.ReplicaSet](rsc.client).Namespace(rs.Namespace).Get(ctx, rs.Name)
		if err != nil {
			return nil, err
		}
		return &fresh.ObjectMeta, nil
	}, rs.UID)
	m := controller.NewRefManager[api.Pod](rsc.client, &rs.ObjectMeta, rsKind.APIVersion, rsKind.Kind, selector, canAdopt)
	return m.Claim(ctx, pods)
}

// manageReplicas creates or deletes pods so that len(pods) approaches
// spec.replicas, at most burst at a time.
func (rsc *Controller) manageReplicas(ctx context.Context, pods []*api.Pod, rs *api.ReplicaSet) error {
	key := cache.MetaNamespaceKeyFunc(rs)
	diff := len(pods) - int(replicas(rs))
	switch {
	case diff < 0:
		n := min(-diff, rsc.burst)
		rsc.expectations.ExpectCreations(key, n)
		ref := controller.NewControllerRef(&rs.ObjectMeta, rsKind.APIVersion, rsKind.Kind)
		created, err := SlowStartBatch(n, SlowStartInitialBatchSize, func() error {
			return rsc.podControl.CreatePod(ctx, rs.Namespace, &rs.Spec.Template, rs, ref)
		})
		// Creates never attempted, or failed, will never be observed.
		for range n - created {
			rsc.expectations.CreationObserved(key)
		}
		return err
	case diff > 0:
		n := min(diff, rsc.burst)
		victims := podsToDelete(pods, rsc.relatedPods(rs), n)
		podKeys := make([]string, len(victims))
		for i, p := range victims {
			podKeys[i] = controller.PodKey(p)
		}
		rsc.expectations.ExpectDeletions(key, podKeys)
		var wg sync.WaitGroup
		errs := make([]error, len(victims))
		for i, p := range victims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := rsc.podControl.DeletePod(ctx, rs.Namespace, p.Name, rs); err != nil {
					rsc.expectations.DeletionObserved(key, controller.PodKey(p))
					if !apierrors.IsNotFound(err) {
						errs[i] = err
					}
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	return nil
}

// relatedPods returns the pods of rs and of the ReplicaSets sharing its
// controller (a Deployment's other revisions), used to rank victims that
// double up on a node.
func (rsc *Controller) relatedPods(rs *api.ReplicaSet) []*api.Pod {
	owners := []*api.ReplicaSet{rs}
	if ref := api.GetControllerOf(&rs.ObjectMeta); ref != nil {
		siblings, _ := rsc.rss.Store().ByIndex(controller.ControllerUIDIndex, string(ref.UID))
		owners = siblings
	}
	var out []*api.Pod
	seen := map[api.UID]bool{}
	for _, o := range owners {
		if seen[o.UID] {
			continue
		}
		seen[o.UID] = true
		pods, _ := rsc.pods.Store().ByIndex(controller.ControllerUIDIndex, string(o.UID))
		out = append(out, controller.FilterActivePods(pods)...)
	}
	return out
}

// podsToDelete picks the n pods to delete first: kube's ranking, where a
// pod's rank is how many related pods share its node.
func podsToDelete(pods, related []*api.Pod, n int) []*api.Pod {
	if n < len(pods) {
		onNode := map[string]int{}
		for _, p := range related {
			if p.Spec.NodeName != "" {
				onNode[p.Spec.NodeName]++
			}
		}
		ranked := controller.PodsByDeletionPreference{Pods: append([]*api.Pod(nil), pods...), Rank: make([]int, len(pods))}
		for i, p := range ranked.Pods {
			if p.Spec.NodeName != "" {
				ranked.Rank[i] = onNode[p.Spec.NodeName]
			}
		}
		sort.Sort(ranked)
		pods = ranked.Pods
	}
	return pods[:min(n, len(pods))]
}

// SlowStartBatch is controller.SlowStartBatch.
func SlowStartBatch(count, initial int, fn func() error) (int, error) {
	return controller.SlowStartBatch(count, initial, fn)
}

// calculateStatus counts the pods and sets or clears the ReplicaFailure
// condition from the result of manageReplicas.
func calculateStatus(rs *api.ReplicaSet, pods []*api.Pod, manageErr error, now time.Time) api.ReplicaSetStatus {
	st := rs.Status
	st.Conditions = append([]api.ReplicaSetCondition(nil), rs.Status.Conditions...)
	templateLabels := labels.SelectorFromSet(rs.Spec.Template.Labels)
	var fully, ready, available int32
	for _, p := range pods {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			fully++
		}
		if controller.IsPodReady(p) {
			ready++
			if controller.IsPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	failure := -1
	for i, c := range st.Conditions {
		if c.Type == api.ReplicaSetReplicaFailure {
			failure = i
		}
	}
	switch {
	case manageErr != nil && failure < 0:
		reason := "FailedCreate"
		if len(pods) > int(replicas(rs)) {
			reason = "FailedDelete"
		}
		st.Conditions = append(st.Conditions, api.ReplicaSetCondition{Type: api.ReplicaSetReplicaFailure,
			Status: api.ConditionTrue, LastTransitionTime: api.NewTime(now), Reason: reason, Message: manageErr.Error()})
	case manageErr == nil && failure >= 0:
		st.Conditions = append(st.Conditions[:failure], st.Conditions[failure+1:]...)
	}
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	st.Replicas = int32(len(pods))
	st.FullyLabeledReplicas = fully
	st.ReadyReplicas = ready
	st.AvailableReplicas = available
	return st
}

// updateStatus writes status unless nothing changed, retrying once on a
// fresh copy.
func (rsc *Controller) updateStatus(ctx context.Context, rs *api.ReplicaSet, status api.ReplicaSetStatus) (*api.ReplicaSet, error) {
	if rs.Status.Replicas == status.Replicas && rs.Status.FullyLabeledReplicas == status.FullyLabeledReplicas &&
		rs.Status.ReadyReplicas == status.ReadyReplicas && rs.Status.AvailableReplicas == status.AvailableReplicas &&
		rs.Generation == rs.Status.ObservedGeneration && reflect.DeepEqual(rs.Status.Conditions, status.Conditions) {
		return rs, nil
	}
	status.ObservedGeneration = rs.Generation
	rc := client.Resource[api.ReplicaSet](rsc.client).Namespace(rs.Namespace)
	var lastErr error
	for i := 0; ; i++ {
		rs.Status = status
		updated, err := rc.UpdateStatus(ctx, rs)
		if err == nil {
			return updated, nil
		}
		lastErr = err
		if i >= statusUpdateRetries || apierrors.IsNotFound(err) {
			break
		}
		if rs, err = rc.Get(ctx, rs.Name); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("update status of replicaset %s/%s: %w", rs.Namespace, rs.Name, lastErr)
}
