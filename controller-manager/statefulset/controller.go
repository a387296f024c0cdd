package statefulset

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/controller-manager/history"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

const (
	// Name is the controller's name in --controllers.
	Name = "statefulset"
	// Component is the events' source.
	Component = "statefulset-controller"
)

var setKind = struct{ APIVersion, Kind string }{"apps/v1", "StatefulSet"}

// Controller is the StatefulSet controller.
type Controller struct {
	client   *client.Client
	pods     *informer.Informer[api.Pod]
	sets     *informer.Informer[api.StatefulSet]
	revs     *informer.Informer[api.ControllerRevision]
	claims   *informer.Informer[api.PersistentVolumeClaim]
	history  history.Client
	recorder events.Recorder
	owners   controller.Owners[api.StatefulSet]
	*controller.Loop[string]
	log *slog.Logger
	now func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller-manager's constructor.
var New = controller.FromFactory(Name, Component, NewController)

// NewController builds the controller on factory's shared informers.
func NewController(c *client.Client, factory *informer.Factory, rec events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	ssc := &Controller{
		client:   c,
		pods:     informer.Shared[api.Pod](factory, "", client.ListOptions{}),
		sets:     informer.Shared[api.StatefulSet](factory, "", client.ListOptions{}),
		revs:     informer.Shared[api.ControllerRevision](factory, "", client.ListOptions{}),
		claims:   informer.Shared[api.PersistentVolumeClaim](factory, "", client.ListOptions{}),
		history:  history.Client{Client: c},
		recorder: rec,
		log:      log,
		now:      time.Now,
	}
	ssc.Loop = controller.NewLoop(controller.LoopConfig[string]{
		Queue: Name, Sync: ssc.sync, Log: log, Metrics: m,
		Started: "statefulset controller started",
	})
	ssc.owners = controller.NewOwners(ssc.sets, setKind.APIVersion, setKind.Kind,
		func(s *api.StatefulSet) *api.LabelSelector { return s.Spec.Selector })
	if err := controller.AddControllerUIDIndex(ssc.pods); err != nil {
		return nil, err
	}
	if err := controller.AddControllerUIDIndex(ssc.revs); err != nil {
		return nil, err
	}
	controller.Watch(ssc.Loop, ssc.sets, controller.QueueKeys[api.StatefulSet](ssc.Loop))
	controller.Watch(ssc.Loop, ssc.pods, informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) { ssc.podChanged(nil, p) },
		OnUpdate: func(old, cur *api.Pod) {
			if old.ResourceVersion != cur.ResourceVersion {
				ssc.podChanged(old, cur)
			}
		},
		OnDelete: func(p *api.Pod, _ bool) { ssc.podChanged(nil, p) },
	})
	// Revisions and claims are read by the sync, their events ignored.
	ssc.WaitFor(ssc.revs, ssc.claims)
	return ssc, nil
}

// podChanged enqueues the set controlling the pod (and the one that did
// before), or for an orphan every set whose selector matches it (before
// and after a label change).
func (ssc *Controller) podChanged(old, cur *api.Pod) {
	for _, p := range []*api.Pod{old, cur} {
		if p == nil || p == old && api.GetControllerOf(&old.ObjectMeta) == nil && reflect.DeepEqual(old.Labels, cur.Labels) {
			continue
		}
		ssc.owners.Each(&p.ObjectMeta, func(s *api.StatefulSet, controls bool) {
			ssc.Add(controller.Key(s))
			if !controls || old == nil {
				return
			}
			// A pod that became ready becomes available minReadySeconds later.
			if after, ok := controller.AvailableAfter(old, cur, s.Spec.MinReadySeconds); ok {
				ssc.Queue.AddAfter(controller.Key(s), after)
			}
		})
	}
}

// sync reconciles one StatefulSet.
func (ssc *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	set, err := ssc.sets.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	selector, err := labels.SelectorFromLabelSelector(set.Spec.Selector)
	if err != nil {
		ssc.log.Warn("invalid selector", "statefulset", key, "err", err)
		return nil
	}
	canAdopt := controller.RecheckDeletionOf[api.StatefulSet](ssc.client, &set.ObjectMeta)
	revs, err := controller.NewRefManager[api.ControllerRevision](ssc.client, &set.ObjectMeta, setKind.APIVersion, setKind.Kind, selector, canAdopt).
		Claim(ctx, controller.OwnedOrOrphans(ssc.revs, &set.ObjectMeta))
	if err != nil {
		return err
	}
	// Only pods whose name is one of the set's are claimed (kube's isMemberOf).
	var candidates []*api.Pod
	for _, p := range controller.OwnedOrOrphans(ssc.pods, &set.ObjectMeta) {
		if parent, _ := parentAndOrdinal(p); parent == set.Name {
			candidates = append(candidates, p)
		}
	}
	pods, err := controller.NewRefManager[api.Pod](ssc.client, &set.ObjectMeta, setKind.APIVersion, setKind.Kind, selector, canAdopt).
		Claim(ctx, candidates)
	if err != nil {
		return err
	}
	if set.DeletionTimestamp != nil {
		return nil
	}
	set = api.DeepCopy(set)
	status, syncErr := ssc.update(ctx, set, revs, pods)
	if status != nil {
		if err := ssc.updateStatus(ctx, set, status); err != nil {
			return err
		}
		if syncErr == nil && set.Spec.MinReadySeconds > 0 && status.AvailableReplicas != status.ReadyReplicas {
			ssc.Queue.AddAfter(key, time.Duration(set.Spec.MinReadySeconds)*time.Second)
		}
	}
	return syncErr
}

// updateStatus writes status when it changed, retrying on conflict with a
// fresh copy.
func (ssc *Controller) updateStatus(ctx context.Context, set *api.StatefulSet, status *api.StatefulSetStatus) error {
	status.ObservedGeneration = set.Generation
	if reflect.DeepEqual(set.Status, *status) {
		return nil
	}
	sc := client.Resource[api.StatefulSet](ssc.client).Namespace(set.Namespace)
	for i := 0; ; i++ {
		set.Status = *status
		_, err := sc.UpdateStatus(ctx, set)
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || i >= 3 {
			return err
		}
		if set, err = sc.Get(ctx, set.Name); err != nil {
			return err
		}
	}
}
