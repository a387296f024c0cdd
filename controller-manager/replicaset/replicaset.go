package replicaset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
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

// Kind is the kind of owner the controller reconciles: ReplicaSets, or
// another kind with a ReplicaSet's spec and status (kube's
// ReplicationController controller runs this controller over RCs through
// such a conversion).
type Kind[T any] struct {
	// Name is the controller's name (queue, metrics); Component the
	// events' source.
	Name, Component string
	// APIVersion and Kind are what the pods' controllerRefs carry.
	APIVersion, Kind string
	// View returns obj as a ReplicaSet. It may share obj's memory: it is
	// read, never written.
	View func(obj *T) *api.ReplicaSet
	// WithStatus returns a copy of obj holding status.
	WithStatus func(obj *T, status api.ReplicaSetStatus) *T
}

// ReplicaSets is the Kind of apps/v1 ReplicaSets.
var ReplicaSets = Kind[api.ReplicaSet]{
	Name: Name, Component: Component, APIVersion: "apps/v1", Kind: "ReplicaSet",
	View: func(rs *api.ReplicaSet) *api.ReplicaSet { return rs },
	WithStatus: func(rs *api.ReplicaSet, st api.ReplicaSetStatus) *api.ReplicaSet {
		out := api.DeepCopy(rs)
		out.Status = st
		return out
	},
}

// Controller is the ReplicaSet controller.
type Controller = OwnerController[api.ReplicaSet, *api.ReplicaSet]

// OwnerController is the ReplicaSet controller over owners of kind T.
type OwnerController[T any, PT interface {
	*T
	api.Object
}] struct {
	kind         Kind[T]
	client       *client.Client
	pods         *informer.Informer[api.Pod]
	rss          *informer.Informer[T]
	podControl   controller.PodControl
	expectations *controller.Expectations
	owners       controller.Owners[T]
	*controller.Loop[string]
	log   *slog.Logger
	burst int
	now   func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller-manager's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return NewFor(ctx, ReplicaSets)
}

// NewFor is the controller-manager's constructor of the controller over
// owners of kind.
func NewFor[T any, PT interface {
	*T
	api.Object
}](ctx *controller.Context, kind Kind[T]) (*OwnerController[T, PT], error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, kind.Name)
	if err != nil {
		return nil, err
	}
	c := ctx.Client
	return NewKindController[T, PT](kind, c, ctx.Factory, controller.RealPodControl{Client: c, Recorder: ctx.Events.RecorderFor(kind.Component)}, ctx.Logger, m)
}

// NewController builds the controller on factory's shared pod and
// ReplicaSet informers.
func NewController(c *client.Client, factory *informer.Factory, podControl controller.PodControl, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
	return NewKindController(ReplicaSets, c, factory, podControl, log, m)
}

// NewKindController builds the controller over owners of kind on
// factory's shared informers.
func NewKindController[T any, PT interface {
	*T
	api.Object
}](kind Kind[T], c *client.Client, factory *informer.Factory, podControl controller.PodControl, log *slog.Logger, m *controller.SyncMetrics) (*OwnerController[T, PT], error) {
	if log == nil {
		log = slog.Default()
	}
	rsc := &OwnerController[T, PT]{
		kind:         kind,
		client:       c,
		pods:         informer.Shared[api.Pod](factory, "", client.ListOptions{}),
		rss:          informer.Shared[T, PT](factory, "", client.ListOptions{}),
		podControl:   podControl,
		expectations: controller.NewExpectations(),
		log:          log,
		burst:        BurstReplicas,
		now:          time.Now,
	}
	rsc.Loop = controller.NewLoop(controller.LoopConfig[string]{
		Queue: kind.Name, Sync: rsc.sync, Log: log, Metrics: m,
		Started: kind.Name + " controller started",
	})
	rsc.owners = controller.NewOwners[T, PT](rsc.rss, kind.APIVersion, kind.Kind,
		func(o *T) *api.LabelSelector { return kind.View(o).Spec.Selector })
	if err := controller.AddControllerUIDIndex(rsc.pods); err != nil {
		return nil, err
	}
	if err := controller.AddControllerUIDIndex[T, PT](rsc.rss); err != nil {
		return nil, err
	}
	controller.Watch(rsc.Loop, rsc.rss, controller.QueueKeysForgetting[T, PT](rsc.Loop, rsc.expectations.Delete))
	controller.Watch(rsc.Loop, rsc.pods, rsc.podEvents())
	return rsc, nil
}

// podEvents maps pod events to ReplicaSet keys, observing the creations
// and deletions the expectations wait for.
func (rsc *OwnerController[T, PT]) podEvents() informer.Handler[api.Pod] {
	return controller.OnOwned(rsc.Loop, rsc.owners, controller.OwnedEvents[api.Pod, T]{
		Created: func(key string, _ *api.Pod) { rsc.expectations.CreationObserved(key) },
		Deleted: func(key string, p *api.Pod) { rsc.expectations.DeletionObserved(key, controller.PodKey(p)) },
		// A pod that became ready becomes available minReadySeconds later.
		Updated: func(owner *T, old, cur *api.Pod) {
			if after, ok := controller.AvailableAfter(old, cur, rsc.kind.View(owner).Spec.MinReadySeconds); ok {
				rsc.Queue.AddAfter(rsc.owners.Key(owner), after)
			}
		},
		// Graceful deletion: the pod is gone for us as soon as it is
		// terminating, so a replacement is made without waiting.
		TerminatingIsDeleted: true,
	})
}

// sync reconciles one ReplicaSet: claim pods, create or delete the
// difference (unless earlier creates/deletes are still unobserved), then
// write the status.
func (rsc *OwnerController[T, PT]) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, err := rsc.rss.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		rsc.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	rs := rsc.kind.View(obj)
	needsSync := rsc.expectations.Satisfied(key)
	selector, err := labels.SelectorFromLabelSelector(rs.Spec.Selector)
	if err != nil {
		rsc.log.Warn("invalid selector", "owner", key, "kind", rsc.kind.Kind, "err", err)
		return nil
	}
	pods := controller.FilterActivePods(controller.OwnedOrOrphans(rsc.pods, &rs.ObjectMeta))
	pods, err = rsc.claimPods(ctx, rs, selector, pods)
	if err != nil {
		return err
	}
	var manageErr error
	if needsSync && rs.DeletionTimestamp == nil {
		manageErr = rsc.manageReplicas(ctx, pods, obj, rs)
	}
	status := calculateStatus(rs, pods, manageErr, rsc.now())
	updated, err := rsc.updateStatus(ctx, obj, rs, status)
	if err != nil {
		return errors.Join(manageErr, err)
	}
	if manageErr == nil && updated.Spec.MinReadySeconds > 0 && updated.Status.ReadyReplicas == replicas(updated) &&
		updated.Status.AvailableReplicas != replicas(updated) {
		rsc.Queue.AddAfter(key, time.Duration(updated.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

func replicas(rs *api.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func (rsc *OwnerController[T, PT]) claimPods(ctx context.Context, rs *api.ReplicaSet, selector labels.Selector, pods []*api.Pod) ([]*api.Pod, error) {
	canAdopt := controller.RecheckDeletionOf[T, PT](rsc.client, &rs.ObjectMeta)
	m := controller.NewRefManager[api.Pod](rsc.client, &rs.ObjectMeta, rsc.kind.APIVersion, rsc.kind.Kind, selector, canAdopt)
	return m.Claim(ctx, pods)
}

// manageReplicas creates or deletes pods so that len(pods) approaches
// spec.replicas, at most burst at a time; owner is rs's object, which the
// events are about.
func (rsc *OwnerController[T, PT]) manageReplicas(ctx context.Context, pods []*api.Pod, owner *T, rs *api.ReplicaSet) error {
	key := cache.MetaNamespaceKeyFunc(rs)
	diff := len(pods) - int(replicas(rs))
	switch {
	case diff < 0:
		n := min(-diff, rsc.burst)
		rsc.expectations.ExpectCreations(key, n)
		ref := controller.NewControllerRef(&rs.ObjectMeta, rsc.kind.APIVersion, rsc.kind.Kind)
		created, err := SlowStartBatch(n, SlowStartInitialBatchSize, func() error {
			return rsc.podControl.CreatePod(ctx, rs.Namespace, &rs.Spec.Template, PT(owner), ref)
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
				if err := rsc.podControl.DeletePod(ctx, rs.Namespace, p.Name, PT(owner)); err != nil {
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
func (rsc *OwnerController[T, PT]) relatedPods(rs *api.ReplicaSet) []*api.Pod {
	owners := []api.UID{rs.UID}
	if ref := api.GetControllerOf(&rs.ObjectMeta); ref != nil {
		siblings, _ := rsc.rss.Store().ByIndex(controller.ControllerUIDIndex, string(ref.UID))
		owners = owners[:0]
		for _, o := range siblings {
			owners = append(owners, PT(o).GetObjectMeta().UID)
		}
	}
	var out []*api.Pod
	seen := map[api.UID]bool{}
	for _, uid := range owners {
		if seen[uid] {
			continue
		}
		seen[uid] = true
		pods, _ := rsc.pods.Store().ByIndex(controller.ControllerUIDIndex, string(uid))
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

// updateStatus writes status into obj (whose view is rs) unless nothing
// changed, retrying once on a fresh copy; it returns the view of the
// object written.
func (rsc *OwnerController[T, PT]) updateStatus(ctx context.Context, obj *T, rs *api.ReplicaSet, status api.ReplicaSetStatus) (*api.ReplicaSet, error) {
	if rs.Status.Replicas == status.Replicas && rs.Status.FullyLabeledReplicas == status.FullyLabeledReplicas &&
		rs.Status.ReadyReplicas == status.ReadyReplicas && rs.Status.AvailableReplicas == status.AvailableReplicas &&
		rs.Generation == rs.Status.ObservedGeneration && reflect.DeepEqual(rs.Status.Conditions, status.Conditions) {
		return rs, nil
	}
	status.ObservedGeneration = rs.Generation
	rc := client.Resource[T, PT](rsc.client).Namespace(rs.Namespace)
	var lastErr error
	for i := 0; ; i++ {
		updated, err := rc.UpdateStatus(ctx, rsc.kind.WithStatus(obj, status))
		if err == nil {
			return rsc.kind.View(updated), nil
		}
		lastErr = err
		if i >= statusUpdateRetries || apierrors.IsNotFound(err) {
			break
		}
		if obj, err = rc.Get(ctx, rs.Name); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("update status of %s %s/%s: %w", strings.ToLower(rsc.kind.Kind), rs.Namespace, rs.Name, lastErr)
}
