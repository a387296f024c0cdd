package deployment

import (
	"context"
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

const (
	// Name is the controller's name in --controllers.
	Name = "deployment"
	// Component is the events' source.
	Component = "deployment-controller"
)

const (
	deploymentAPIVersion, deploymentKind = "apps/v1", "Deployment"
)

// Controller is the Deployment controller.
type Controller struct {
	client      *client.Client
	deployments *informer.Informer[api.Deployment]
	rss         *informer.Informer[api.ReplicaSet]
	pods        *informer.Informer[api.Pod]
	recorder    events.Recorder
	*controller.Loop[string]
	log *slog.Logger
	now func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller-manager's constructor.
var New = controller.FromFactory(Name, Component, NewController)

// NewController builds the controller on factory's shared informers.
func NewController(c *client.Client, factory *informer.Factory, recorder events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	dc := &Controller{
		client:      c,
		deployments: informer.Shared[api.Deployment](factory, "", client.ListOptions{}),
		rss:         informer.Shared[api.ReplicaSet](factory, "", client.ListOptions{}),
		pods:        informer.Shared[api.Pod](factory, "", client.ListOptions{}),
		recorder:    recorder,
		log:         log,
		now:         time.Now,
	}
	dc.Loop = controller.NewLoop(controller.LoopConfig[string]{
		Queue: Name, Sync: dc.syncDeployment, Log: log, Metrics: m,
		Started: "deployment controller started",
	})
	if err := controller.AddControllerUIDIndex(dc.rss); err != nil {
		return nil, err
	}
	if err := controller.AddControllerUIDIndex(dc.pods); err != nil {
		return nil, err
	}
	controller.Watch(dc.Loop, dc.deployments, controller.QueueKeys[api.Deployment](dc.Loop))
	controller.Watch(dc.Loop, dc.rss, informer.Handler[api.ReplicaSet]{
		OnAdd:    func(rs *api.ReplicaSet, _ bool) { dc.addReplicaSet(rs) },
		OnUpdate: dc.updateReplicaSet,
		OnDelete: func(rs *api.ReplicaSet, _ bool) { dc.deleteReplicaSet(rs) },
	})
	controller.Watch(dc.Loop, dc.pods, informer.Handler[api.Pod]{
		OnDelete: func(p *api.Pod, _ bool) { dc.deletePod(p) },
	})
	return dc, nil
}

func (dc *Controller) enqueue(d *api.Deployment) { dc.Add(controller.Key(d)) }

func (dc *Controller) enqueueAfter(d *api.Deployment, after time.Duration) {
	dc.Queue.AddAfter(controller.Key(d), after)
}

func (dc *Controller) resolve(namespace string, ref *api.OwnerReference) *api.Deployment {
	return controller.ResolveControllerRef(dc.deployments.Lister().Namespace(namespace), ref, deploymentAPIVersion, deploymentKind)
}

// deploymentsForReplicaSet returns the deployments whose selector matches
// an orphaned ReplicaSet.
func (dc *Controller) deploymentsForReplicaSet(rs *api.ReplicaSet) []*api.Deployment {
	var out []*api.Deployment
	for _, d := range dc.deployments.Lister().Namespace(rs.Namespace).List(nil) {
		sel, err := labels.SelectorFromLabelSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(rs.Labels)) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func (dc *Controller) addReplicaSet(rs *api.ReplicaSet) {
	if rs.DeletionTimestamp != nil {
		dc.deleteReplicaSet(rs)
		return
	}
	if ref := api.GetControllerOf(&rs.ObjectMeta); ref != nil {
		if d := dc.resolve(rs.Namespace, ref); d != nil {
			dc.enqueue(d)
		}
		return
	}
	for _, d := range dc.deploymentsForReplicaSet(rs) {
		dc.enqueue(d)
	}
}

func (dc *Controller) updateReplicaSet(old, cur *api.ReplicaSet) {
	if old.ResourceVersion == cur.ResourceVersion {
		return
	}
	curRef, oldRef := api.GetControllerOf(&cur.ObjectMeta), api.GetControllerOf(&old.ObjectMeta)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := dc.resolve(old.Namespace, oldRef); d != nil {
			dc.enqueue(d)
		}
	}
	if curRef != nil {
		if d := dc.resolve(cur.Namespace, curRef); d != nil {
			dc.enqueue(d)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(old.Labels, cur.Labels) {
		for _, d := range dc.deploymentsForReplicaSet(cur) {
			dc.enqueue(d)
		}
	}
}

func (dc *Controller) deleteReplicaSet(rs *api.ReplicaSet) {
	if ref := api.GetControllerOf(&rs.ObjectMeta); ref != nil {
		if d := dc.resolve(rs.Namespace, ref); d != nil {
			dc.enqueue(d)
		}
	}
}

// deletePod wakes a Recreate deployment once its last old pod is gone.
func (dc *Controller) deletePod(pod *api.Pod) {
	ref := api.GetControllerOf(&pod.ObjectMeta)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, err := dc.rss.Lister().Namespace(pod.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return
	}
	dref := api.GetControllerOf(&rs.ObjectMeta)
	if dref == nil {
		return
	}
	d := dc.resolve(rs.Namespace, dref)
	if d == nil || d.Spec.Strategy.Type != api.RecreateDeploymentStrategyType {
		return
	}
	rss, _ := dc.rss.Store().ByIndex(controller.ControllerUIDIndex, string(d.UID))
	for _, pods := range dc.podMap(rss) {
		if len(pods) > 0 {
			return
		}
	}
	dc.enqueue(d)
}

// podMap groups the pods controlled by each ReplicaSet of rss.
func (dc *Controller) podMap(rss []*api.ReplicaSet) map[api.UID][]*api.Pod {
	out := make(map[api.UID][]*api.Pod, len(rss))
	for _, rs := range rss {
		pods, _ := dc.pods.Store().ByIndex(controller.ControllerUIDIndex, string(rs.UID))
		out[rs.UID] = pods
	}
	return out
}

// syncDeployment reconciles one deployment.
func (dc *Controller) syncDeployment(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := dc.deployments.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	d := api.DeepCopy(cached)
	if d.Spec.Selector == nil || (len(d.Spec.Selector.MatchLabels) == 0 && len(d.Spec.Selector.MatchExpressions) == 0) {
		dc.recorder.Eventf(d, api.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			return dc.updateStatus(ctx, d)
		}
		return nil
	}
	rsList, err := dc.replicaSetsForDeployment(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return dc.syncStatusOnly(ctx, d, rsList)
	}
	if err := dc.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused {
		return dc.sync(ctx, d, rsList)
	}
	scaling, err := dc.isScalingEvent(ctx, d, rsList)
	if err != nil {
		return err
	}
	if scaling {
		return dc.sync(ctx, d, rsList)
	}
	switch d.Spec.Strategy.Type {
	case api.RecreateDeploymentStrategyType:
		return dc.rolloutRecreate(ctx, d, rsList)
	case api.RollingUpdateDeploymentStrategyType, "":
		return dc.rolloutRolling(ctx, d, rsList)
	}
	return fmt.Errorf("unexpected deployment strategy type: %s", d.Spec.Strategy.Type)
}

// replicaSetsForDeployment adopts matching orphaned ReplicaSets, releases
// owned ones that stopped matching, and returns the deployment's.
func (dc *Controller) replicaSetsForDeployment(ctx context.Context, d *api.Deployment) ([]*api.ReplicaSet, error) {
	sel, err := labels.SelectorFromLabelSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s/%s has invalid label selector: %w", d.Namespace, d.Name, err)
	}
	canAdopt := controller.RecheckDeletionOf[api.Deployment](dc.client, &d.ObjectMeta)
	m := controller.NewRefManager[api.ReplicaSet](dc.client, &d.ObjectMeta, deploymentAPIVersion, deploymentKind, sel, canAdopt)
	return m.Claim(ctx, controller.OwnedOrOrphans(dc.rss, &d.ObjectMeta))
}

// updateStatus writes d's status (and annotations) and keeps d's
// resourceVersion current, so one sync can write twice.
func (dc *Controller) updateStatus(ctx context.Context, d *api.Deployment) error {
	updated, err := client.Resource[api.Deployment](dc.client).Namespace(d.Namespace).UpdateStatus(ctx, d)
	if err != nil {
		return err
	}
	d.ResourceVersion = updated.ResourceVersion
	return nil
}
