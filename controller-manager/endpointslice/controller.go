package endpointslice

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// ControllerName is the managed-by label value of the slices it owns.
const ControllerName = "endpointslice-controller.k8s.io"

// MaxEndpointsPerSlice is kube's --max-endpoints-per-slice default.
const MaxEndpointsPerSlice = 100

// byService indexes slices by their service-name label.
const byService = "endpointslice.serviceName"

// Controller keeps EndpointSlices in line with services and pods.
type Controller struct {
	client   *client.Client
	services *informer.Informer[api.Service]
	pods     *informer.Informer[api.Pod]
	slices   *informer.Informer[api.EndpointSlice]
	*controller.Loop[string]
	recorder events.Recorder
	log      *slog.Logger
	// MaxPerSlice bounds the endpoints of one slice.
	MaxPerSlice int

	// written holds the slices this controller wrote until the cache
	// shows them (kube's endpointSliceTracker).
	written *controller.Writes
}

var _ controller.Interface = (*Controller)(nil)

// New is the "endpointslice" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, "endpointslice")
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx.Client,
		informer.Shared[api.Service](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Pod](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.EndpointSlice](ctx.Factory, "", client.ListOptions{LabelSelector: api.LabelManagedBy + "=" + ControllerName}),
		ctx.Events.RecorderFor("endpoint-slice-controller"), ctx.Logger)
	if err != nil {
		return nil, err
	}
	c.SetMetrics(m)
	return c, nil
}

// NewController wires the controller; slices should be an informer of the
// slices managed by ControllerName.
func NewController(c *client.Client, services *informer.Informer[api.Service], pods *informer.Informer[api.Pod], slices *informer.Informer[api.EndpointSlice], rec events.Recorder, log *slog.Logger) (*Controller, error) {
	ctl := &Controller{
		client: c, services: services, pods: pods, slices: slices, recorder: rec, log: log,
		MaxPerSlice: MaxEndpointsPerSlice,
		written:     controller.NewWrites(),
	}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "endpoint_slice", Sync: ctl.sync, Log: log})
	if err := slices.AddIndexers(cache.Indexers[api.EndpointSlice]{byService: func(s *api.EndpointSlice) []string {
		if n := s.Labels[api.LabelServiceName]; n != "" {
			return []string{s.Namespace + "/" + n}
		}
		return nil
	}}); err != nil {
		return nil, err
	}
	controller.Watch(ctl.Loop, services, controller.QueueKeys[api.Service](ctl.Loop))
	controller.Watch(ctl.Loop, pods, controller.OnServicePods(ctl.Loop, services.Lister()))
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

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	existingAll, _ := c.slices.Store().ByIndex(byService, key)
	if c.stale(key, existingAll) {
		c.Queue.AddAfter(key, 50*time.Millisecond)
		return nil
	}
	sliceClient := client.Resource[api.EndpointSlice](c.client).Namespace(ns)
	svc, err := c.services.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		for _, s := range existingAll {
			if err := c.delete(ctx, key, s); err != nil {
				return err
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Selector == nil || svc.Spec.Type == api.ServiceTypeExternalName {
		return nil
	}
	pods := c.pods.Lister().Namespace(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	desired := Desired(svc, pods, c.MaxPerSlice)

	// Match desired slices with existing ones of the same address type and
	// ports, in name order, so a stable pod set rewrites nothing.
	existing := map[string][]*api.EndpointSlice{}
	for _, s := range existingAll {
		k := groupKey(s.AddressType, s.Ports)
		existing[k] = append(existing[k], s)
	}
	for _, l := range existing {
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	sliceLabels := maps.Clone(svc.Labels)
	if sliceLabels == nil {
		sliceLabels = map[string]string{}
	}
	sliceLabels[api.LabelServiceName] = svc.Name
	sliceLabels[api.LabelManagedBy] = ControllerName
	ref := controller.NewControllerRef(&svc.ObjectMeta, "v1", "Service")
	for _, d := range desired {
		k := groupKey(d.AddressType, d.Ports)
		var cur *api.EndpointSlice
		if l := existing[k]; len(l) > 0 {
			cur, existing[k] = l[0], l[1:]
		}
		if cur == nil {
			s := &api.EndpointSlice{
				ObjectMeta:  api.ObjectMeta{Namespace: ns, GenerateName: svc.Name + "-", Labels: sliceLabels, OwnerReferences: []api.OwnerReference{ref}},
				AddressType: d.AddressType, Endpoints: d.Endpoints, Ports: d.Ports,
			}
			created, err := sliceClient.Create(ctx, s)
			if err != nil {
				c.recorder.Eventf(svc, api.EventTypeWarning, "FailedToUpdateEndpointSlices", "Error updating Endpoint Slices for Service %s: %v", key, err)
				return fmt.Errorf("create endpointslice for %s: %w", key, err)
			}
			c.remember(key, created.Name, created.ResourceVersion)
			continue
		}
		if reflect.DeepEqual(normalize(cur.Endpoints), d.Endpoints) && maps.Equal(cur.Labels, sliceLabels) {
			continue
		}
		s := api.DeepCopy(cur)
		s.Endpoints, s.Labels = d.Endpoints, sliceLabels
		updated, err := sliceClient.Update(ctx, s)
		if err != nil {
			return fmt.Errorf("update endpointslice %s/%s: %w", ns, cur.Name, err)
		}
		c.remember(key, updated.Name, updated.ResourceVersion)
	}
	for _, l := range existing {
		for _, s := range l {
			if err := c.delete(ctx, key, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Controller) delete(ctx context.Context, key string, s *api.EndpointSlice) error {
	err := client.Resource[api.EndpointSlice](c.client).Namespace(s.Namespace).Delete(ctx, s.Name, nil)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete endpointslice %s/%s: %w", s.Namespace, s.Name, err)
	}
	c.remember(key, s.Name, "")
	return nil
}

func (c *Controller) remember(key, slice, rv string) { c.written.Remember(key, slice, rv) }

// stale reports whether the cache has not caught up with this
// controller's writes for the service.
func (c *Controller) stale(key string, cached []*api.EndpointSlice) bool {
	have := make(map[string]string, len(cached))
	for _, s := range cached {
		have[s.Name] = s.ResourceVersion
	}
	return c.written.Stale(key, have)
}

// DesiredSlice is the content of one slice the service should have.
type DesiredSlice struct {
	AddressType api.AddressType
	Ports       []api.EndpointSlicePort
	Endpoints   []api.Endpoint
}

// Desired computes the slices of a service: its pods' endpoints grouped by
// address type and resolved ports, sorted by address, cut into chunks of
// at most maxPerSlice. A service without endpoints gets one empty slice,
// as kube's placeholder.
func Desired(svc *api.Service, pods []*api.Pod, maxPerSlice int) []DesiredSlice {
	type group struct {
		addrType  api.AddressType
		ports     []api.EndpointSlicePort
		endpoints []api.Endpoint
	}
	groups := map[string]*group{}
	publishNotReady := svc.Spec.PublishNotReadyAddresses
	for _, pod := range pods {
		if !controller.ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		addrType := api.AddressTypeIPv4
		if a, err := netip.ParseAddr(pod.Status.PodIP); err == nil && a.Is6() && !a.Is4In6() {
			addrType = api.AddressTypeIPv6
		}
		var ports []api.EndpointSlicePort
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, err := controller.FindPort(pod, sp)
			if err != nil {
				continue
			}
			proto := sp.Protocol
			if proto == "" {
				proto = api.ProtocolTCP
			}
			name := sp.Name
			ports = append(ports, api.EndpointSlicePort{Name: &name, Port: &num, Protocol: &proto, AppProtocol: sp.AppProtocol})
		}
		if len(svc.Spec.Ports) > 0 && len(ports) == 0 {
			continue
		}
		sort.Slice(ports, func(i, j int) bool { return *ports[i].Name < *ports[j].Name })
		terminating := pod.DeletionTimestamp != nil
		serving := publishNotReady || controller.IsPodReady(pod)
		ready := serving && !terminating
		ep := api.Endpoint{
			Addresses:  []string{pod.Status.PodIP},
			Conditions: api.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
			TargetRef:  controller.PodReference(pod),
		}
		if pod.Spec.NodeName != "" {
			n := pod.Spec.NodeName
			ep.NodeName = &n
		}
		if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name {
			h := pod.Spec.Hostname
			ep.Hostname = &h
		}
		k := groupKey(addrType, ports)
		g := groups[k]
		if g == nil {
			g = &group{addrType: addrType, ports: ports}
			groups[k] = g
		}
		g.endpoints = append(g.endpoints, ep)
	}
	if len(groups) == 0 {
		return []DesiredSlice{{AddressType: api.AddressTypeIPv4, Endpoints: []api.Endpoint{}}}
	}
	var out []DesiredSlice
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		sort.Slice(g.endpoints, func(i, j int) bool { return g.endpoints[i].Addresses[0] < g.endpoints[j].Addresses[0] })
		for start := 0; start < len(g.endpoints); start += maxPerSlice {
			end := min(start+maxPerSlice, len(g.endpoints))
			out = append(out, DesiredSlice{AddressType: g.addrType, Ports: g.ports, Endpoints: g.endpoints[start:end:end]})
		}
	}
	return out
}

func groupKey(t api.AddressType, ports []api.EndpointSlicePort) string {
	var b strings.Builder
	b.WriteString(string(t) + "|")
	for _, p := range ports {
		if p.Name != nil {
			b.WriteString(*p.Name)
		}
		b.WriteString("/")
		if p.Port != nil {
			b.WriteString(strconv.Itoa(int(*p.Port)))
		}
		b.WriteString("/")
		if p.Protocol != nil {
			b.WriteString(string(*p.Protocol))
		}
		b.WriteString(";")
	}
	return b.String()
}

func normalize(eps []api.Endpoint) []api.Endpoint {
	if eps == nil {
		return []api.Endpoint{}
	}
	return eps
}
