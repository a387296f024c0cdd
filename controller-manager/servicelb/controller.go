package servicelb

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// Name is the controller's name in --controllers (cloud-controller-
// manager's name for its load balancer controller).
const Name = "service-lb-controller"

// ExcludeLabel keeps a node out of every load balancer (kube's
// LabelNodeExcludeBalancers).
const ExcludeLabel = "node.kubernetes.io/exclude-from-external-load-balancers"

// Controller writes the nodes' addresses into LoadBalancer Services.
type Controller struct {
	*controller.Loop[string]
	client   *client.Client
	services *informer.Informer[api.Service]
	nodes    *informer.Informer[api.Node]
	recorder events.Recorder
	log      *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller's constructor for the controller-manager.
func New(ctx *controller.Context) (controller.Interface, error) {
	return controller.FromFactory(Name, "service-controller",
		func(c *client.Client, f *informer.Factory, rec events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
			ctl := NewController(c, informer.Shared[api.Service](f, "", client.ListOptions{}),
				informer.Shared[api.Node](f, "", client.ListOptions{}), rec, log)
			ctl.SetMetrics(m)
			return ctl, nil
		})(ctx)
}

// NewController builds the controller over the informers.
func NewController(c *client.Client, services *informer.Informer[api.Service], nodes *informer.Informer[api.Node], rec events.Recorder, log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	ctl := &Controller{client: c, services: services, nodes: nodes, recorder: rec, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "service", Sync: ctl.sync, Log: log,
		Started: "starting service load balancer controller"})
	enqueue := func(s *api.Service) {
		if s.Spec.Type == api.ServiceTypeLoadBalancer || len(s.Status.LoadBalancer.Ingress) > 0 {
			ctl.Add(s.Namespace + "/" + s.Name)
		}
	}
	controller.Watch(ctl.Loop, services, informer.Handler[api.Service]{
		OnAdd:    func(s *api.Service, _ bool) { enqueue(s) },
		OnUpdate: func(_, s *api.Service) { enqueue(s) },
	})
	// A node that comes, goes, or changes its addresses, readiness or
	// exclusion changes every load balancer.
	all := func() {
		for _, s := range services.Store().List() {
			if s.Spec.Type == api.ServiceTypeLoadBalancer {
				ctl.Add(s.Namespace + "/" + s.Name)
			}
		}
	}
	controller.Watch(ctl.Loop, nodes, informer.Handler[api.Node]{
		OnAdd: func(*api.Node, bool) { all() },
		OnUpdate: func(old, cur *api.Node) {
			if !slices.Equal(nodeAddresses([]*api.Node{old}), nodeAddresses([]*api.Node{cur})) {
				all()
			}
		},
		OnDelete: func(*api.Node, bool) { all() },
	})
	return ctl
}

// ours tells a Service this controller balances: type LoadBalancer
// without a loadBalancerClass.
func ours(s *api.Service) bool {
	return s.Spec.Type == api.ServiceTypeLoadBalancer && s.Spec.LoadBalancerClass == nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	s := controller.Cached(c.services, key)
	if s == nil {
		return nil
	}
	var want []api.LoadBalancerIngress
	switch {
	case ours(s):
		vip := "VIP"
		for _, ip := range nodeAddresses(c.nodes.Store().List()) {
			want = append(want, api.LoadBalancerIngress{IP: ip, IPMode: &vip})
		}
	case s.Spec.Type == api.ServiceTypeLoadBalancer:
		return nil // another class' load balancer
	}
	if ingressEqual(s.Status.LoadBalancer.Ingress, want) {
		return nil
	}
	if ours(s) && len(s.Status.LoadBalancer.Ingress) == 0 {
		c.recorder.Event(s, api.EventTypeNormal, "EnsuringLoadBalancer", "Ensuring load balancer")
	}
	cp := *s
	cp.Status.LoadBalancer = api.LoadBalancerStatus{Ingress: want}
	_, err := client.Resource[api.Service](c.client).Namespace(s.Namespace).UpdateStatus(ctx, &cp)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write the load balancer status of Service %s: %w", key, err)
	}
	switch {
	case len(want) == 0 && !ours(s):
		c.recorder.Event(s, api.EventTypeNormal, "DeletedLoadBalancer", "Deleted load balancer")
		c.log.Info("cleared the load balancer status of a Service no longer of type LoadBalancer", "service", key)
	default:
		c.recorder.Event(s, api.EventTypeNormal, "EnsuredLoadBalancer", "Ensured load balancer")
		c.log.Info("load balancer addresses written", "service", key, "ingress", len(want))
	}
	return nil
}

// nodeAddresses are the sorted addresses of the nodes that take load
// balancer traffic: Ready, not excluded; each node's ExternalIP, or its
// InternalIP without one.
func nodeAddresses(nodes []*api.Node) []string {
	var out []string
	for _, n := range nodes {
		if _, excluded := n.Labels[ExcludeLabel]; excluded || !ready(n) {
			continue
		}
		ip := ""
		for _, a := range n.Status.Addresses {
			if a.Type == api.NodeExternalIP && ip == "" {
				ip = a.Address
			}
		}
		if ip == "" {
			for _, a := range n.Status.Addresses {
				if a.Type == api.NodeInternalIP {
					ip = a.Address
					break
				}
			}
		}
		if ip != "" && !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	slices.Sort(out)
	return out
}

func ready(n *api.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

func ingressEqual(a, b []api.LoadBalancerIngress) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].IP != b[i].IP || a[i].Hostname != b[i].Hostname || (a[i].IPMode == nil) != (b[i].IPMode == nil) ||
			(a[i].IPMode != nil && *a[i].IPMode != *b[i].IPMode) {
			return false
		}
	}
	return true
}
