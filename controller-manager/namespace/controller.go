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
	ns := controller.Cached(c.namespaces, name)
	if ns == nil || ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, api.FinalizerKubernetes) {
		return nil
	}
	resources, err := c.contentResources(ctx)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	deleteErrs := c.deleteContent(ctx, name, resources)
	remaining, listErr := c.remaining(ctx, name, resources)
	if listErr != nil {
		return fmt.Errorf("namespace %s: %w", name, listErr)
	}
	if len(deleteErrs) > 0 {
		return fmt.Errorf("namespace %s: %w", name, errors.Join(deleteErrs...))
	}
	if len(remaining) > 0 {
		// kube also reports this as the NamespaceContentRemaining
		// condition; minik8s's apiserver currently finishes the deletion
		// of a Terminating namespace on any write (it checks only
		// metadata.finalizers), so the status is left alone.
		c.log.Debug("namespace content remaining", "namespace", name, "remaining", remaining)
		c.Queue.AddAfter(name, RecheckPeriod)
		return nil
	}
	return c.finalize(ctx, ns)
}

// deleteContent deletes every object of every namespaced resource in ns.
func (c *Controller) deleteContent(ctx context.Context, ns string, resources []api.ResourceInfo) []error {
	background := api.DeletePropagationBackground
	var errs []error
	for _, info := range resources {
		err := client.ResourceFor[controller.PartialObject](c.client, info).Namespace(ns).
			DeleteCollection(ctx, &api.DeleteOptions{PropagationPolicy: &background}, client.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", info.Resource, err))
		}
	}
	return errs
}

// remaining counts the objects left in ns per resource.
func (c *Controller) remaining(ctx context.Context, ns string, resources []api.ResourceInfo) (map[string]int, error) {
	out := map[string]int{}
	for _, info := range resources {
		l, err := client.ResourceFor[controller.PartialObject](c.client, info).Namespace(ns).List(ctx, client.ListOptions{})
		if err != nil {
			return out, fmt.Errorf("list %s: %w", info.Resource, err)
		}
		if len(l.Items) > 0 {
			name := info.Resource
			if info.Group != "" {
				name += "." + info.Group
			}
			out[name] = len(l.Items)
		}
	}
	return out, nil
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
