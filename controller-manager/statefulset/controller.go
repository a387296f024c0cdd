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
	"github.com/minik8s/minik8s/internal/workqueue"
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
	queue    *workqueue.RateLimitingQueue[string]
	log      *slog.Logger
	metrics  *controller.SyncMetrics
	now      func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller-manager's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, Name)
	if err != nil {
		return nil, err
	}
	return NewController(ctx.Client, ctx.Factory, ctx.Events.RecorderFor(Component), ctx.Logger, m)
}

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
		queue:    workqueue.NewRateLimiting[string](nil, workqueue.WithName(Name)),
		log:      log,
		metrics:  m,
		now:      time.Now,
	}
	if err := controller.AddControllerUIDIndex(ssc.pods); err != nil {
		return nil, err
	}
	if err := controller.AddControllerUIDIndex(ssc.revs); err != nil {
		return nil, err
	}
	ssc.sets.AddEventHandler(informer.Handler[api.StatefulSet]{
		OnAdd:    func(s *api.StatefulSet, _ bool) { ssc.enqueue(s) },
		OnUpdate: func(_, s *api.StatefulSet) { ssc.enqueue(s) },
		OnDelete: func(s *api.StatefulSet, _ bool) { ssc.enqueue(s) },
	})
	ssc.pods.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) { ssc.podChanged(nil, p) },
		OnUpdate: func(old, cur *api.Pod) {
			if old.ResourceVersion != cur.ResourceVersion {
				ssc.podChanged(old, cur)
			}
		},
		OnDelete: func(p *api.Pod, _ bool) { ssc.podChanged(nil, p) },
	})
	return ssc, nil
}

// Run implements controller.Interface.
func (ssc *Controller) Run(ctx context.Context, workers int) error {
	if !informer.WaitForCacheSync(ctx, ssc.pods, ssc.sets, ssc.revs, ssc.claims) {
		return nil
	}
	ssc.log.Info("statefulset controller started", "workers", workers)
	controller.RunWorkers(ctx, ssc.queue, workers, ssc.log, controller.Instrument(ssc.metrics, ssc.sync))
	return nil
}

func (ssc *Controller) enqueue(s *api.StatefulSet) { ssc.queue.Add(cache.MetaNamespaceKeyFunc(s)) }

// podChanged enqueues the set controlling the pod (and the one that did
// before), or for an orphan every set whose selector matches it.
func (ssc *Controller) podChanged(old, cur *api.Pod) {
	for _, p := range []*api.Pod{old, cur} {
		if p == nil {
			continue
		}
		if ref := api.GetControllerOf(&p.ObjectMeta); ref != nil {
			if s := ssc.resolve(p.Namespace, ref); s != nil {
				ssc.enqueue(s)
				if old != nil && !controller.IsPodReady(old) && controller.IsPodReady(cur) && s.Spec.MinReadySeconds > 0 {
					ssc.queue.AddAfter(cache.MetaNamespaceKeyFunc(s), time.Duration(s.Spec.MinReadySeconds)*time.Second+time.Second)
				}
			}
			continue
		}
		if old != nil && reflect.DeepEqual(old.Labels, cur.Labels) && p == old {
			continue
		}
		for _, s := range ssc.sets.Lister().Namespace(p.Namespace).List(nil) {
			sel, err := labels.SelectorFromLabelSelector(s.Spec.Selector)
			if err == nil && !sel.Empty() && sel.Matches(labels.Set(p.Labels)) {
				ssc.enqueue(s)
			}
		}
	}
}

func (ssc *Controller) resolve(ns string, ref *api.OwnerReference) *api.StatefulSet {
	return controller.ResolveControllerRef(ssc.sets.Lister().Namespace(ns), ref, setKind.APIVersion, setKind.Kind)
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
	canAdopt := controller.RecheckDeletion(func(ctx context.Context) (*api.ObjectMeta, error) {
		fresh, err := client.Resource[api.StatefulSet](ssc.client).Namespace(set.Namespace).Get(ctx, set.Name)
		if err != nil {
			return nil, err
		}
		return &fresh.ObjectMeta, nil
	}, set.UID)
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
			ssc.queue.AddAfter(key, time.Duration(set.Spec.MinReadySeconds)*time.Second)
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
