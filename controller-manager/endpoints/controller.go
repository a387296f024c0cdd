package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// LabelHeadless marks the Endpoints of a headless service, as kube.
const LabelHeadless = "service.kubernetes.io/headless"

// Controller keeps Endpoints in line with services and pods.
type Controller struct {
	client    *client.Client
	services  *informer.Informer[api.Service]
	pods      *informer.Informer[api.Pod]
	endpoints *informer.Informer[api.Endpoints]
	*controller.Loop[string]
	recorder events.Recorder
	log      *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the "endpoints" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, "endpoints")
	if err != nil {
		return nil, err
	}
	c := NewController(ctx.Client,
		informer.Shared[api.Service](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Pod](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Endpoints](ctx.Factory, "", client.ListOptions{}),
		ctx.Events.RecorderFor("endpoint-controller"), ctx.Logger)
	c.SetMetrics(m)
	return c, nil
}

// NewController wires the controller over its informers.
func NewController(c *client.Client, services *informer.Informer[api.Service], pods *informer.Informer[api.Pod], endpoints *informer.Informer[api.Endpoints], rec events.Recorder, log *slog.Logger) *Controller {
	ctl := &Controller{client: c, services: services, pods: pods, endpoints: endpoints, recorder: rec, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "endpoint", Sync: ctl.sync, Log: log})
	controller.Watch(ctl.Loop, services, controller.QueueKeys[api.Service](ctl.Loop))
	controller.Watch(ctl.Loop, pods, controller.OnServicePods(ctl.Loop, services.Lister()))
	// Someone deleting the Endpoints of a live service gets them back.
	controller.Watch(ctl.Loop, endpoints, informer.Handler[api.Endpoints]{
		OnDelete: func(e *api.Endpoints, _ bool) { ctl.Add(controller.Key(e)) },
	})
	return ctl
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	epClient := client.Resource[api.Endpoints](c.client).Namespace(ns)
	svc, err := c.services.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// The service is gone: so are its endpoints.
		if _, err := c.endpoints.Lister().Namespace(ns).Get(name); apierrors.IsNotFound(err) {
			return nil
		}
		if err := epClient.Delete(ctx, name, nil); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete endpoints %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Spec.Selector == nil || svc.Spec.Type == api.ServiceTypeExternalName {
		return nil // endpoints of selector-less services are the user's
	}
	pods := c.pods.Lister().Namespace(ns).List(labels.SelectorFromValidatedSet(svc.Spec.Selector))
	subsets := Subsets(svc, pods)
	overCapacity := truncate(subsets)

	current, err := c.endpoints.Lister().Namespace(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	wantLabels := maps.Clone(svc.Labels)
	if wantLabels == nil {
		wantLabels = map[string]string{}
	}
	if svc.Spec.ClusterIP == api.ClusterIPNone {
		wantLabels[LabelHeadless] = ""
	}
	if current == nil {
		ep := &api.Endpoints{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, Labels: wantLabels}, Subsets: subsets}
		if overCapacity {
			ep.Annotations = map[string]string{AnnotationOverCapacity: "truncated"}
		}
		if _, err := epClient.Create(ctx, ep); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return err // the cache is behind: retry against it
			}
			c.recorder.Eventf(svc, api.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %s: %v", key, err)
			return fmt.Errorf("create endpoints %s: %w", key, err)
		}
		return nil
	}
	_, marked := current.Annotations[AnnotationOverCapacity]
	if reflect.DeepEqual(normalize(current.Subsets), subsets) && maps.Equal(current.Labels, wantLabels) && marked == overCapacity {
		return nil
	}
	ep := api.DeepCopy(current)
	ep.Subsets = subsets
	ep.Labels = wantLabels
	if overCapacity {
		if ep.Annotations == nil {
			ep.Annotations = map[string]string{}
		}
		ep.Annotations[AnnotationOverCapacity] = "truncated"
	} else {
		delete(ep.Annotations, AnnotationOverCapacity)
	}
	if _, err := epClient.Update(ctx, ep); err != nil {
		if !apierrors.IsConflict(err) {
			c.recorder.Eventf(svc, api.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %s: %v", key, err)
		}
		return fmt.Errorf("update endpoints %s: %w", key, err)
	}
	return nil
}

// Subsets computes the service's endpoint subsets from its pods, packed
// the way kube's RepackSubsets packs them: addresses sharing the same
// resolved ports form one subset; addresses and ports sorted.
func Subsets(svc *api.Service, pods []*api.Pod) []api.EndpointSubset {
	type group struct {
		ports           []api.EndpointPort
		ready, notReady map[string]api.EndpointAddress
	}
	groups := map[string]*group{}
	add := func(ports []api.EndpointPort, addr api.EndpointAddress, ready bool) {
		sortPorts(ports)
		k := portsKey(ports)
		g := groups[k]
		if g == nil {
			g = &group{ports: ports, ready: map[string]api.EndpointAddress{}, notReady: map[string]api.EndpointAddress{}}
			groups[k] = g
		}
		if ready {
			g.ready[addr.IP] = addr
		} else {
			g.notReady[addr.IP] = addr
		}
	}
	publishNotReady := svc.Spec.PublishNotReadyAddresses
	for _, pod := range pods {
		if !controller.ShouldPodBeInEndpoints(pod, publishNotReady) {
			continue
		}
		addr := api.EndpointAddress{IP: pod.Status.PodIP, TargetRef: controller.PodReference(pod)}
		if pod.Spec.NodeName != "" {
			n := pod.Spec.NodeName
			addr.NodeName = &n
		}
		if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace {
			addr.Hostname = pod.Spec.Hostname
		}
		ready := publishNotReady || controller.IsPodReady(pod)
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == api.ClusterIPNone {
				add(nil, addr, ready) // headless without ports: addresses only
			}
			continue
		}
		var ports []api.EndpointPort
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, err := controller.FindPort(pod, sp)
			if err != nil {
				continue // this pod does not serve that named port
			}
			proto := sp.Protocol
			if proto == "" {
				proto = api.ProtocolTCP
			}
			ports = append(ports, api.EndpointPort{Name: sp.Name, Port: num, Protocol: proto, AppProtocol: sp.AppProtocol})
		}
		if len(ports) > 0 {
			add(ports, addr, ready)
		}
	}
	var out []api.EndpointSubset
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		out = append(out, api.EndpointSubset{Addresses: sortedAddrs(g.ready), NotReadyAddresses: sortedAddrs(g.notReady), Ports: g.ports})
	}
	return out
}

func sortPorts(ports []api.EndpointPort) {
	sort.Slice(ports, func(i, j int) bool {
		if ports[i].Name != ports[j].Name {
			return ports[i].Name < ports[j].Name
		}
		return ports[i].Port < ports[j].Port
	})
}

func portsKey(ports []api.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		b.WriteString(p.Name + "/" + strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol) + ";")
	}
	return b.String()
}

func sortedAddrs(m map[string]api.EndpointAddress) []api.EndpointAddress {
	if len(m) == 0 {
		return nil
	}
	out := make([]api.EndpointAddress, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].IP < out[j].IP })
	return out
}

// normalize makes stored subsets comparable with computed ones: empty
// slices as nil.
func normalize(subsets []api.EndpointSubset) []api.EndpointSubset {
	if len(subsets) == 0 {
		return nil
	}
	out := make([]api.EndpointSubset, len(subsets))
	for i, s := range subsets {
		out[i] = s
		if len(s.Addresses) == 0 {
			out[i].Addresses = nil
		}
		if len(s.NotReadyAddresses) == 0 {
			out[i].NotReadyAddresses = nil
		}
		if len(s.Ports) == 0 {
			out[i].Ports = nil
		}
	}
	return out
}
