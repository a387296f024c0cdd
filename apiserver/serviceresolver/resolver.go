package serviceresolver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// Lister reads Services and their EndpointSlices, from the watch caches.
type Lister interface {
	// Service returns ns/name, or false when there is none.
	Service(ns, name string) (*api.Service, bool)
	// EndpointSlices returns the slices of Service ns/name (those labelled
	// kubernetes.io/service-name=name).
	EndpointSlices(ns, name string) []*api.EndpointSlice
}

// Routing is how a Service is reached.
type Routing int

// Routings.
const (
	// Endpoints dials a ready endpoint of the Service directly.
	Endpoints Routing = iota
	// ClusterIP dials the Service's cluster IP and port.
	ClusterIP
)

// Resolver resolves Services to https URLs.
type Resolver struct {
	Lister  Lister
	Routing Routing
}

var servicesGR = apierrors.GroupResource{Resource: "services"}

// ResolveEndpoint returns https://HOST:PORT for port of Service ns/name.
func (r *Resolver) ResolveEndpoint(ns, name string, port int32) (*url.URL, error) {
	svc, ok := r.Lister.Service(ns, name)
	if !ok {
		return nil, apierrors.NewNotFound(servicesGR, name)
	}
	if svc.Spec.Type == api.ServiceTypeExternalName {
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	}
	var sp *api.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			sp = &svc.Spec.Ports[i]
			break
		}
	}
	if sp == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, name))
	}
	if r.Routing == ClusterIP {
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == "None" {
			return nil, fmt.Errorf("service %s/%s has no cluster IP", ns, name)
		}
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(port)))}, nil
	}
	var candidates []string
	for _, slice := range r.Lister.EndpointSlices(ns, name) {
		target, ok := slicePort(slice, sp)
		if !ok {
			continue
		}
		for _, ep := range slice.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
				continue
			}
			candidates = append(candidates, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(target))))
		}
	}
	if len(candidates) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	return &url.URL{Scheme: "https", Host: candidates[rand.IntN(len(candidates))]}, nil
}

// slicePort is the port a slice serves the Service port sp at: the slice
// port of the same name and protocol.
func slicePort(slice *api.EndpointSlice, sp *api.ServicePort) (int32, bool) {
	proto := sp.Protocol
	if proto == "" {
		proto = api.ProtocolTCP
	}
	for _, p := range slice.Ports {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		pp := api.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if name == sp.Name && pp == proto && p.Port != nil {
			return *p.Port, true
		}
	}
	return 0, false
}
