package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
)

// RecheckPeriod is how soon a namespace whose content is still going away
// is looked at again.
const RecheckPeriod = time.Second

// Controller empties and finalizes deleted namespaces.
type Controller struct {
	client     *client.Client
	namespaces *informer.Informer[api.Namespace]
	resources  []api.ResourceInfo
	*controller.Loop[string]
	log *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the "namespace" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	c := NewController(ctx.Client, informer.Shared[api.Namespace](ctx.Factory, "", client.ListOptions{}), Resources(), ctx.Logger)
	return controller.WithSyncMetrics(c, ctx.Metrics, "namespace")
}

// Resources returns the namespaced resources of api.Resources (at their
// preferred version), the content a namespace deletion removes.
func Resources() []api.ResourceInfo {
	var out []api.ResourceInfo
	for _, r := range api.Resources {
		if r.Namespaced && r.Preferred() {
			out = append(out, r)
		}
	}
	return out
}

// NewController wires the controller over a namespace informer.
func NewController(c *client.Client, namespaces *informer.Informer[api.Namespace], resources []api.ResourceInfo, log *slog.Logger) *Controller {
	ctl := &Controller{client: c, namespaces: namespaces, resources: resources, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{
		Queue: "namespace", Sync: ctl.sync, Log: log,
		// Its own back-off, plain exponential without the default's
		// overall bucket: a namespace's content usually goes away within
		// seconds, and many namespaces may be deleted at once.
		RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[string](100*time.Millisecond, time.Minute),
	})
	enqueue := func(ns *api.Namespace) {
		if ns.DeletionTimestamp != nil {
			ctl.Add(ns.Name)
		}
	}
	controller.Watch(ctl.Loop, namespaces, informer.Handler[api.Namespace]{
		OnAdd:    func(ns *api.Namespace, _ bool) { enqueue(ns) },
		OnUpdate: func(_, ns *api.Namespace) { enqueue(ns) },
	})
	return ctl
}

func (c *Controller) sync(ctx context.Context, name string) error {
	cached := controller.Cached(c.namespaces, name)
	if cached == nil || cached.DeletionTimestamp == nil || !slices.Contains(cached.Spec.Finalizers, api.FinalizerKubernetes) {
		return nil
	}
	ns := api.DeepCopy(cached)
	var conds conditionUpdate
	resources, err := c.contentResources(ctx)
	if err != nil {
		// As kube's: what discovery did find is still deleted, but the
		// namespace stays until discovery works.
		conds.discoveryFailed(err)
		resources = c.resources
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	// Pods go first, as kube v1.37's namespace deletion
	// (OrderedNamespaceDeletion): the rest of the content (secrets,
	// config maps, service accounts, claims) may be in use by them until
	// they are gone.
	pods := slices.IndexFunc(resources, func(r api.ResourceInfo) bool { return r.Group == "" && r.Resource == "pods" })
	total := contentLeft{resources: map[string]int{}, finalizers: map[string]int{}}
	if pods >= 0 {
		left, err := c.deleteResource(ctx, ns, resources[pods])
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to delete pods for namespace: %s, err: %w", name, err))
			conds.contentFailed(err)
		}
		total.add(resources[pods], left)
		if left.count > 0 {
			c.log.Debug("pods remaining, other content waits", "namespace", name, "pods", left.count)
			c.writeConditions(ctx, ns, &conds)
			return c.requeue(name, errs)
		}
	}
	for i, info := range resources {
		if i == pods {
			continue
		}
		left, err := c.deleteResource(ctx, ns, info)
		if err != nil {
			errs = append(errs, err)
			conds.contentFailed(err)
		}
		total.add(info, left)
	}
	conds.contentTotals(total)
	c.writeConditions(ctx, ns, &conds)
	if len(errs) > 0 || len(total.resources) > 0 {
		c.log.Debug("namespace content remaining", "namespace", name, "remaining", total.resources)
		return c.requeue(name, errs)
	}
	return c.finalize(ctx, ns)
}

// requeue looks at name again: after errs with the queue's back-off, else
// after RecheckPeriod.
func (c *Controller) requeue(name string, errs []error) error {
	if len(errs) > 0 {
		return fmt.Errorf("namespace %s: %w", name, errors.Join(errs...))
	}
	c.Queue.AddAfter(name, RecheckPeriod)
	return nil
}

// left is what deleting one resource's objects of a namespace left.
type left struct {
	count      int
	finalizers map[string]int // objects left per finalizer
}

// contentLeft totals left over the resources of a namespace: objects per
// "resource.group" and per finalizer.
type contentLeft struct {
	resources  map[string]int
	finalizers map[string]int
}

func (t contentLeft) add(info api.ResourceInfo, l left) {
	if l.count == 0 {
		return
	}
	// kube's "resource.group", "pods." for the core group.
	t.resources[info.Resource+"."+info.Group] += l.count
	for f, n := range l.finalizers {
		t.finalizers[f] += n
	}
}

// deleteResource deletes every object of one resource in ns and reports
// what is left, as kube's deleteAllContentForGroupVersionResource: objects
// left are expected while they have finalizers or, for pods, while their
// grace period (counted from the namespace's deletion) runs; others are an
// error.
func (c *Controller) deleteResource(ctx context.Context, ns *api.Namespace, info api.ResourceInfo) (left, error) {
	var estimate time.Duration
	if info.Group == "" && info.Resource == "pods" {
		var err error
		if estimate, err = c.podsGracePeriod(ctx, ns); err != nil {
			return left{}, err
		}
	}
	objs := client.ResourceFor[controller.PartialObject](c.client, info).Namespace(ns.Name)
	background := api.DeletePropagationBackground
	err := objs.DeleteCollection(ctx, &api.DeleteOptions{PropagationPolicy: &background}, client.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
		return left{}, fmt.Errorf("delete %s: %w", info.Resource, err)
	}
	l, err := objs.List(ctx, client.ListOptions{})
	if err != nil {
		return left{}, fmt.Errorf("list %s: %w", info.Resource, err)
	}
	out := left{count: len(l.Items), finalizers: map[string]int{}}
	for _, o := range l.Items {
		for _, f := range o.Finalizers {
			out.finalizers[f]++
		}
	}
	if out.count == 0 || len(out.finalizers) > 0 || time.Since(ns.DeletionTimestamp.Time) < estimate {
		return out, nil
	}
	return out, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %s/%s, Resource=%s", ns.Name, info.Group, info.Version, info.Resource)
}

// podsGracePeriod is the longest termination grace period of the pods of
// ns that have not finished, as kube's estimateGracefulTerminationForPods.
func (c *Controller) podsGracePeriod(ctx context.Context, ns *api.Namespace) (time.Duration, error) {
	l, err := client.Resource[api.Pod](c.client).Namespace(ns.Name).List(ctx, client.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list pods: %w", err)
	}
	var longest int64
	for _, p := range l.Items {
		if p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed {
			continue
		}
		if g := p.Spec.TerminationGracePeriodSeconds; g != nil && *g > longest {
			longest = *g
		}
	}
	return time.Duration(longest) * time.Second, nil
}

// writeConditions writes the deletion conditions into ns's status when
// they changed; a failed write is logged, as kube's, and done again on the
// next pass.
func (c *Controller) writeConditions(ctx context.Context, ns *api.Namespace, u *conditionUpdate) {
	if !u.apply(&ns.Status, time.Now()) {
		return
	}
	updated, err := client.Resource[api.Namespace](c.client).UpdateStatus(ctx, ns)
	if err != nil {
		c.log.Warn("could not update the namespace's deletion conditions", "namespace", ns.Name, "err", err)
		return
	}
	*ns = *updated
}

// finalize removes the kubernetes finalizer through /finalize.
func (c *Controller) finalize(ctx context.Context, ns *api.Namespace) error {
	updated := api.DeepCopy(ns)
	updated.Spec.Finalizers = slices.DeleteFunc(updated.Spec.Finalizers, func(f api.FinalizerName) bool { return f == api.FinalizerKubernetes })
	var out api.Namespace
	err := client.Resource[api.Namespace](c.client).Subresource(ns.Name, "finalize").Put(ctx, updated, &out)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("finalize namespace %s: %w", ns.Name, err)
	}
	c.log.Info("namespace emptied and finalized", "namespace", ns.Name)
	return nil
}
