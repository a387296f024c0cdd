package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// DefaultName is the ServiceAccount every namespace gets.
const DefaultName = "default"

// Controller keeps the default ServiceAccount in every active namespace.
type Controller struct {
	client          *client.Client
	namespaces      *informer.Informer[api.Namespace]
	serviceAccounts *informer.Informer[api.ServiceAccount]
	// ensure are the ServiceAccounts every namespace has (kube's
	// serviceAccountsToEnsure: just "default").
	ensure []string
	*controller.Loop[string]
	log *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the "serviceaccount" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	c := NewController(ctx.Client,
		informer.Shared[api.Namespace](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.ServiceAccount](ctx.Factory, "", client.ListOptions{}), ctx.Logger)
	return controller.WithSyncMetrics(c, ctx.Metrics, "serviceaccount")
}

// NewController wires the controller over namespace and ServiceAccount
// informers: a namespace added or updated, or one of the ensured
// ServiceAccounts deleted, queues the namespace.
func NewController(c *client.Client, namespaces *informer.Informer[api.Namespace], sas *informer.Informer[api.ServiceAccount], log *slog.Logger) *Controller {
	ctl := &Controller{client: c, namespaces: namespaces, serviceAccounts: sas, ensure: []string{DefaultName}, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "serviceaccount", Sync: ctl.sync, Log: log})
	controller.Watch(ctl.Loop, namespaces, informer.Handler[api.Namespace]{
		OnAdd:    func(ns *api.Namespace, _ bool) { ctl.Add(ns.Name) },
		OnUpdate: func(_, ns *api.Namespace) { ctl.Add(ns.Name) },
	})
	controller.Watch(ctl.Loop, sas, informer.Handler[api.ServiceAccount]{
		OnDelete: func(sa *api.ServiceAccount, _ bool) {
			if slices.Contains(ctl.ensure, sa.Name) {
				ctl.Add(sa.Namespace)
			}
		},
	})
	return ctl
}

// sync creates the ensured ServiceAccounts missing from namespace name.
func (c *Controller) sync(ctx context.Context, name string) error {
	ns := controller.Cached(c.namespaces, name)
	if ns == nil {
		return nil
	}
	if ns.Status.Phase != api.NamespaceActive {
		return nil // nothing can be created in a terminating namespace
	}
	var errs []error
	for _, sa := range c.ensure {
		_, err := c.serviceAccounts.Lister().Namespace(name).Get(sa)
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		_, err = client.Resource[api.ServiceAccount](c.client).Namespace(name).Create(ctx, &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: sa}})
		switch {
		case err == nil:
			c.log.Info("created service account", "namespace", name, "serviceAccount", sa)
		case apierrors.IsAlreadyExists(err), controller.NamespaceTerminating(err), apierrors.IsNotFound(err):
		default:
			errs = append(errs, fmt.Errorf("create service account %s/%s: %w", name, sa, err))
		}
	}
	return errors.Join(errs...)
}
