package endpointslicemirroring

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"reflect"
	"sort"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

const (
	// Name is the controller's name in --controllers.
	Name = "endpointslicemirroring"
	// ControllerName is the managed-by label value of the slices it owns.
	ControllerName = "endpointslicemirroring-controller.k8s.io"
	// LabelSkipMirror set to "true" on an Endpoints keeps it from being
	// mirrored (the endpoints controller sets it on the Endpoints it
	// manages).
	LabelSkipMirror = "endpointslice.kubernetes.io/skip-mirror"
	// leaderAnnotation marks Endpoints used as leader-election locks.
	leaderAnnotation = "control-plane.alpha.kubernetes.io/leader"
	// MaxEndpointsPerSubset is kube's --mirroring-max-endpoints-per-subset
	// default: the addresses of a subset mirrored, and of one slice.
	MaxEndpointsPerSubset = 1000
)

// annotations not copied from the Endpoints to its slices.
var skippedAnnotations = map[string]bool{
	"endpoints.kubernetes.io/last-change-trigger-time": true,
	"kubectl.kubernetes.io/last-applied-configuration": true,
}

// byEndpoints indexes slices by their service-name label.
const byEndpoints = "endpointslicemirroring.endpoints"

// Controller mirrors custom Endpoints into EndpointSlices.
type Controller struct {
	client    *client.Client
	endpoints *informer.Informer[api.Endpoints]
	services  *informer.Informer[api.Service]
	slices    *informer.Informer[api.EndpointSlice]
	*controller.Loop[string]
	written *controller.Writes
	log     *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller-manager's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, Name)
	if err != nil {
		return nil, err
	}
	return NewController(ctx.Client,
		informer.Shared[api.Endpoints](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Service](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.EndpointSlice](ctx.Factory, "", client.ListOptions{LabelSelector: api.LabelManagedBy + "=" + ControllerName}),
		ctx.Logger, m)
}

// NewController wires the controller; slices should be an informer of the
// slices managed by ControllerName.
func NewController(c *client.Client, endpoints *informer.Informer[api.Endpoints], services *informer.Informer[api.Service],
	slices *informer.Informer[api.EndpointSlice], log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	ctl := &Controller{client: c, endpoints: endpoints, services: services, slices: slices, written: controller.NewWrites(), log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "endpoint_slice_mirroring", Sync: ctl.sync, Log: log, Metrics: m,
		Started: "endpointslicemirroring controller started"})
	if err := slices.AddIndexers(cache.Indexers[api.EndpointSlice]{byEndpoints: func(s *api.EndpointSlice) []string {
		if n := s.Labels[api.LabelServiceName]; n != "" {
			return []string{s.Namespace + "/" + n}
		}
		return nil
	}}); err != nil {
		return nil, err
	}
	controller.Watch(ctl.Loop, endpoints, controller.QueueKeys[api.Endpoints](ctl.Loop))
	controller.Watch(ctl.Loop, services, controller.QueueKeys[api.Service](ctl.Loop))
	sliceChanged := func(s *api.EndpointSlice) {
		if n := s.Labels[api.LabelServiceName]; n != "" {
			ctl.Add(s.Namespace + "/" + n)
		}
	}
	controller.Watch(ctl.Loop, slices, informer.Handler[api.EndpointSlice]{
		OnAdd: func(s *api.EndpointSlice, _ bool) { sliceChanged(s) },
		OnUpdate: func(old, s *api.EndpointSlice) {
			if old.ResourceVersion != s.ResourceVersion {
				sliceChanged(s)
			}
		},
		OnDelete: func(s *api.EndpointSlice, _ bool) { sliceChanged(s) },
	})
	return ctl, nil
}

// sync reconciles the mirrored slices of the Endpoints (and Service) key.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	existing, _ := c.slices.Store().ByIndex(byEndpoints, key)
	have := make(map[string]string, len(existing))
	for _, s := range existing {
		have[s.Name] = s.ResourceVersion
	}
	if c.written.Stale(key, have) {
		c.Queue.AddAfter(key, 50*time.Millisecond)
		return nil
	}
	var desired []*api.EndpointSlice
	eps, err := c.endpoints.Lister().Namespace(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	svc, serr := c.services.Lister().Namespace(ns).Get(name)
	if serr != nil && !apierrors.IsNotFound(serr) {
		return serr
	}
	// A Service with a selector has its slices from the endpointslice
	// controller; without a Service nothing is mirrored.
	if err == nil && serr == nil && svc.Spec.Selector == nil && shouldMirror(eps) {
		desired = Desired(eps)
	}
	return c.reconcile(ctx, key, existing, desired)
}

func shouldMirror(eps *api.Endpoints) bool {
	if eps.Labels[LabelSkipMirror] == "true" {
		return false
	}
	_, leader := eps.Annotations[leaderAnnotation]
	return !leader
}

// reconcile turns existing into desired: slices of the same address type
// and ports are updated in place (in name order), missing ones created,
// the rest deleted.
func (c *Controller) reconcile(ctx context.Context, key string, existing, desired []*api.EndpointSlice) error {
	byGroup := map[string][]*api.EndpointSlice{}
	for _, s := range existing {
		k := groupKey(s)
		byGroup[k] = append(byGroup[k], s)
	}
	for _, l := range byGroup {
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	for _, d := range desired {
		sc := client.Resource[api.EndpointSlice](c.client).Namespace(d.Namespace)
		k := groupKey(d)
		var cur *api.EndpointSlice
		if l := byGroup[k]; len(l) > 0 {
			cur, byGroup[k] = l[0], l[1:]
		}
		if cur == nil {
			created, err := sc.Create(ctx, d)
			if err != nil {
				return fmt.Errorf("create endpointslice for endpoints %s: %w", key, err)
			}
			c.written.Remember(key, created.Name, created.ResourceVersion)
			continue
		}
		if reflect.DeepEqual(cur.Endpoints, d.Endpoints) && maps.Equal(cur.Labels, d.Labels) &&
			maps.Equal(cur.Annotations, d.Annotations) && reflect.DeepEqual(cur.OwnerReferences, d.OwnerReferences) {
			continue
		}
		s := api.DeepCopy(cur)
		s.Endpoints, s.Labels, s.Annotations, s.OwnerReferences = d.Endpoints, d.Labels, d.Annotations, d.OwnerReferences
		updated, err := sc.Update(ctx, s)
		if err != nil {
			return fmt.Errorf("update endpointslice %s/%s: %w", s.Namespace, s.Name, err)
		}
		c.written.Remember(key, updated.Name, updated.ResourceVersion)
	}
	for _, l := range byGroup {
		for _, s := range l {
			err := client.Resource[api.EndpointSlice](c.client).Namespace(s.Namespace).Delete(ctx, s.Name, nil)
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err)
			}
			c.written.Remember(key, s.Name, "")
		}
	}
	return nil
}

// groupKey identifies the slices interchangeable for an update: the same
// address type and ports.
func groupKey(s *api.EndpointSlice) string {
	b, _ := json.Marshal(s.Ports)
	return string(s.AddressType) + "/" + string(b)
}

// Desired is the slices mirroring eps, as kube's mirroring reconciler
// forms them: per subset, its ports (in their order, protocol TCP when
// unset) with its ready then not-ready addresses, at most
// MaxEndpointsPerSubset, split by address type (an address that is not an
// IP is skipped); subsets with the same ports share slices, an address
// appearing twice is kept once; a slice's endpoints are sorted by address,
// at most MaxEndpointsPerSubset of them.
func Desired(eps *api.Endpoints) []*api.EndpointSlice {
	type group struct {
		addressType api.AddressType
		ports       []api.EndpointSlicePort
		endpoints   []api.Endpoint
		seen        map[string]bool
	}
	var order []string
	groups := map[string]*group{}
	for _, ss := range eps.Subsets {
		ports := slicePorts(ss.Ports)
		n := 0
		add := func(a api.EndpointAddress, ready bool) {
			if n >= MaxEndpointsPerSubset {
				return
			}
			ip, err := netip.ParseAddr(a.IP)
			if err != nil {
				return
			}
			n++
			ip = ip.Unmap()
			at := api.AddressTypeIPv4
			if ip.Is6() {
				at = api.AddressTypeIPv6
			}
			k := groupKey(&api.EndpointSlice{AddressType: at, Ports: ports})
			g := groups[k]
			if g == nil {
				g = &group{addressType: at, ports: ports, seen: map[string]bool{}}
				groups[k] = g
				order = append(order, k)
			}
			if g.seen[ip.String()] {
				return
			}
			g.seen[ip.String()] = true
			ep := api.Endpoint{Addresses: []string{ip.String()}, Conditions: api.EndpointConditions{Ready: &ready},
				TargetRef: a.TargetRef, NodeName: a.NodeName}
			if a.Hostname != "" {
				ep.Hostname = &a.Hostname
			}
			g.endpoints = append(g.endpoints, ep)
		}
		for _, a := range ss.Addresses {
			add(a, true)
		}
		for _, a := range ss.NotReadyAddresses {
			add(a, false)
		}
	}
	labels := maps.Clone(eps.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[api.LabelServiceName] = eps.Name
	labels[api.LabelManagedBy] = ControllerName
	annotations := map[string]string{}
	for k, v := range eps.Annotations {
		if !skippedAnnotations[k] {
			annotations[k] = v
		}
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	ref := controller.NewControllerRef(&eps.ObjectMeta, "v1", "Endpoints")
	var out []*api.EndpointSlice
	for _, k := range order {
		g := groups[k]
		// By address, as kube's slices list them (and stable whatever the
		// Endpoints' order, so that a reordering rewrites nothing).
		sort.SliceStable(g.endpoints, func(i, j int) bool { return g.endpoints[i].Addresses[0] < g.endpoints[j].Addresses[0] })
		for start := 0; start < len(g.endpoints); start += MaxEndpointsPerSubset {
			out = append(out, &api.EndpointSlice{
				TypeMeta: api.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
				ObjectMeta: api.ObjectMeta{Namespace: eps.Namespace, GenerateName: eps.Name + "-",
					Labels: labels, Annotations: annotations, OwnerReferences: []api.OwnerReference{ref}},
				AddressType: g.addressType,
				Ports:       g.ports,
				Endpoints:   g.endpoints[start:min(start+MaxEndpointsPerSubset, len(g.endpoints))],
			})
		}
	}
	return out
}

// slicePorts converts a subset's ports.
func slicePorts(ports []api.EndpointPort) []api.EndpointSlicePort {
	out := make([]api.EndpointSlicePort, 0, len(ports))
	for _, p := range ports {
		name, port, proto := p.Name, p.Port, p.Protocol
		if proto == "" {
			proto = api.ProtocolTCP
		}
		out = append(out, api.EndpointSlicePort{Name: &name, Port: &port, Protocol: &proto, AppProtocol: p.AppProtocol})
	}
	return out
}
