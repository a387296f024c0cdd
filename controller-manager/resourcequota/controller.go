package resourcequota

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/quota"
)

// lister lists the objects of one resource in a namespace.
type lister func(ctx context.Context, ns string) ([]api.Object, error)

// Controller is the resourcequota controller.
type Controller struct {
	client  *client.Client
	quotas  *informer.Informer[api.ResourceQuota]
	listers map[quota.GroupResource]lister
	*controller.Loop[string]
	resync time.Duration
	now    func() time.Time
	log    *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, "resourcequota")
	if err != nil {
		return nil, err
	}
	c := &Controller{
		client: ctx.Client, listers: map[quota.GroupResource]lister{}, resync: ctx.Options.ResourceQuotaSyncPeriod,
		now: time.Now, log: ctx.Logger,
	}
	c.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "resourcequota_primary", Sync: c.sync, Log: ctx.Logger, Metrics: m})
	c.quotas = informer.Shared[api.ResourceQuota](ctx.Factory, "", client.ListOptions{})
	controller.Watch(c.Loop, c.quotas, informer.Handler[api.ResourceQuota]{
		OnAdd: func(q *api.ResourceQuota, _ bool) { c.enqueue(q) },
		OnUpdate: func(old, cur *api.ResourceQuota) {
			// A status written by admission or by this controller is not
			// a reason to recompute; a changed spec, or a status that does
			// not state the spec's limits yet, is.
			if !quota.Equals(old.Spec.Hard, cur.Spec.Hard) || !quota.Equals(cur.Spec.Hard, cur.Status.Hard) {
				c.enqueue(cur)
			}
		},
		OnDelete: func(q *api.ResourceQuota, _ bool) { c.replenish(q.Namespace) },
	})
	c.listers[quota.GroupResource{Resource: "resourcequotas"}] = listerOf(c.quotas)
	watch[api.Pod](c, ctx.Factory, "", "pods")
	watch[api.Service](c, ctx.Factory, "", "services")
	watch[api.PersistentVolumeClaim](c, ctx.Factory, "", "persistentvolumeclaims")
	watch[api.ConfigMap](c, ctx.Factory, "", "configmaps")
	watch[api.Secret](c, ctx.Factory, "", "secrets")
	watch[api.ReplicationController](c, ctx.Factory, "", "replicationcontrollers")
	watch[api.ReplicaSet](c, ctx.Factory, "apps", "replicasets")
	watch[api.Deployment](c, ctx.Factory, "apps", "deployments")
	watch[api.StatefulSet](c, ctx.Factory, "apps", "statefulsets")
	watch[api.DaemonSet](c, ctx.Factory, "apps", "daemonsets")
	watch[api.Job](c, ctx.Factory, "batch", "jobs")
	watch[api.CronJob](c, ctx.Factory, "batch", "cronjobs")
	return c, nil
}

func listerOf[T any, PT interface {
	*T
	api.Object
}](inf *informer.Informer[T]) lister {
	return func(_ context.Context, ns string) ([]api.Object, error) {
		items := inf.Lister().Namespace(ns).List(nil)
		out := make([]api.Object, len(items))
		for i, it := range items {
			out[i] = PT(it)
		}
		return out, nil
	}
}

// watch lists group/resource from a shared informer and replenishes the
// namespace's quotas when one of its objects goes or changes what it
// consumes.
func watch[T any, PT interface {
	*T
	api.Object
}](c *Controller, f *informer.Factory, group, resource string) {
	gr := quota.GroupResource{Group: group, Resource: resource}
	inf := informer.Shared[T, PT](f, "", client.ListOptions{})
	c.listers[gr] = listerOf[T, PT](inf)
	controller.Watch(c.Loop, inf, informer.Handler[T]{
		OnUpdate: func(old, cur *T) {
			if old == cur {
				return // a resync
			}
			now := c.now()
			if !quota.Equals(quota.Usage(gr, PT(old), now), quota.Usage(gr, PT(cur), now)) {
				c.replenish(PT(cur).GetObjectMeta().Namespace)
			}
		},
		OnDelete: func(obj *T, _ bool) { c.replenish(PT(obj).GetObjectMeta().Namespace) },
	})
}

func (c *Controller) enqueue(q *api.ResourceQuota) { c.Add(controller.Key(q)) }

// replenish queues every quota of a namespace.
func (c *Controller) replenish(ns string) {
	for _, q := range c.quotas.Lister().Namespace(ns).List(nil) {
		c.enqueue(q)
	}
}

// Run implements controller.Interface: the Loop's workers, and a resync
// every period beside them.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if !c.WaitForCaches(ctx) {
		return nil
	}
	go controller.EveryAfter(ctx, c.resync, c.enqueueAll)
	c.RunWorkers(ctx, workers)
	return nil
}

// enqueueAll queues every quota: usage that changed without an event the
// controller watches (a kind it lists from the apiserver, a charge for a
// write that was then refused) is corrected.
func (c *Controller) enqueueAll(context.Context) {
	for _, q := range c.quotas.Lister().List(nil) {
		c.enqueue(q)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	q := controller.Cached(c.quotas, key)
	if q == nil {
		return nil
	}
	used, err := c.usage(ctx, q)
	if err != nil {
		return err
	}
	if quota.Equals(q.Status.Hard, q.Spec.Hard) && quota.Equals(q.Status.Used, used) {
		return nil
	}
	out := api.DeepCopy(q)
	out.Status.Hard = q.Spec.Hard
	out.Status.Used = used
	_, err = client.Resource[api.ResourceQuota](c.client).Namespace(q.Namespace).UpdateStatus(ctx, out)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if apierrors.IsConflict(err) {
		// Admission charged it meanwhile: recompute from the new version.
		c.Queue.AddAfter(key, 100*time.Millisecond)
		return nil
	}
	return err
}

// usage computes q's status.used: for each resource q limits, what the
// namespace's objects in q's scopes consume; zero when nothing does.
func (c *Controller) usage(ctx context.Context, q *api.ResourceQuota) (api.ResourceList, error) {
	// Matching is on status.hard: judge the objects by the spec's limits.
	judge := api.DeepCopy(q)
	judge.Status.Hard = q.Spec.Hard
	hard := quota.ResourceNames(q.Spec.Hard)
	used := api.ResourceList{}
	now := c.now()
	for _, gr := range resourcesOf(hard) {
		names := quota.MatchingResources(gr, hard)
		if len(names) == 0 {
			continue
		}
		objs, err := c.list(ctx, gr, q.Namespace)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gr.Resource, err)
		}
		for _, o := range objs {
			ok, err := quota.Matches(judge, gr, o)
			if err != nil {
				return nil, err
			}
			if ok {
				used = quota.Add(used, quota.Mask(quota.Usage(gr, o, now), names))
			}
		}
	}
	for _, n := range hard {
		if _, ok := used[n]; !ok {
			used[n] = resource.MustParse("0")
		}
	}
	return used, nil
}

func (c *Controller) list(ctx context.Context, gr quota.GroupResource, ns string) ([]api.Object, error) {
	if l, ok := c.listers[gr]; ok {
		return l(ctx, ns)
	}
	info, ok := api.LookupResource(gr.Group, gr.Resource)
	if !ok {
		// A custom resource: found through discovery, as kube's quota
		// controller finds what it may count. A discovery failure keeps the
		// quota's status as it is (the sync is retried); a resource the
		// server does not serve has nothing to count.
		found, err := c.client.GroupResources(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range found {
			if r.Info.Group == gr.Group && r.Info.Resource == gr.Resource {
				info, ok = r.Info, true
				break
			}
		}
	}
	if !ok || !info.Namespaced {
		return nil, nil // nothing of it can be in a namespace
	}
	l, err := c.client.Dynamic(info).Namespace(ns).List(ctx, client.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]api.Object, len(l.Items))
	for i := range l.Items {
		// Only object counts are kept for these: an empty object of the
		// kind will do (api.CustomObject for a custom resource).
		o := info.New()
		o.GetObjectMeta().Name = l.Items[i].GetName()
		o.GetObjectMeta().Namespace = ns
		out[i] = o
	}
	return out, nil
}

// resourcesOf are the resources quota names refer to: count/R[.G] names
// R in G, the others the core resources that consume them.
func resourcesOf(names []api.ResourceName) []quota.GroupResource {
	seen := map[quota.GroupResource]bool{}
	var out []quota.GroupResource
	add := func(gr quota.GroupResource) {
		if !seen[gr] {
			seen[gr] = true
			out = append(out, gr)
		}
	}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(string(n), "count/"); ok {
			r, g, _ := strings.Cut(rest, ".")
			add(quota.GroupResource{Group: g, Resource: r})
			continue
		}
		for _, r := range []string{"pods", "services", "persistentvolumeclaims", "configmaps", "secrets", "replicationcontrollers", "resourcequotas"} {
			gr := quota.GroupResource{Resource: r}
			if len(quota.MatchingResources(gr, []api.ResourceName{n})) > 0 {
				add(gr)
			}
		}
	}
	return out
}
