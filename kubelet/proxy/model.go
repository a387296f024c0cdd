package proxy

import (
	"sort"
	"strconv"

	"github.com/minik8s/minik8s/api"
)

// servicePort is one port of one Service, with its ready endpoints: the
// unit kube-proxy programs ("ns/name:port").
type servicePort struct {
	Namespace, Name string
	PortName        string
	Protocol        api.Protocol
	ClusterIP       string
	Port            int32
	NodePort        int32
	// Affinity is the ClientIP session affinity timeout; 0 means none.
	AffinitySeconds int32
	// Endpoints are "ip:port" of ready backends, sorted.
	Endpoints []string
}

// String is kube-proxy's service port name, "ns/name:port" ("ns/name" for
// an unnamed port).
func (sp *servicePort) String() string {
	s := sp.Namespace + "/" + sp.Name
	if sp.PortName != "" {
		s += ":" + sp.PortName
	}
	return s
}

// buildServicePorts joins Services and their EndpointSlices. Only Services
// with a ClusterIP (not headless, not ExternalName) are proxied; endpoints
// count when ready (kube-proxy falls back to serving-and-terminating ones
// only when none is ready).
func buildServicePorts(services []*api.Service, slices []*api.EndpointSlice) []*servicePort {
	type key struct{ ns, svc string }
	byService := map[key][]*api.EndpointSlice{}
	for _, sl := range slices {
		if sl.AddressType != api.AddressTypeIPv4 {
			continue
		}
		name := sl.Labels[api.LabelServiceName]
		if name == "" {
			continue
		}
		k := key{sl.Namespace, name}
		byService[k] = append(byService[k], sl)
	}
	var out []*servicePort
	for _, svc := range services {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == api.ClusterIPNone || svc.Spec.Type == api.ServiceTypeExternalName {
			continue
		}
		var affinity int32
		if svc.Spec.SessionAffinity == api.ServiceAffinityClientIP {
			affinity = api.DefaultClientIPServiceAffinitySeconds
			if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
				affinity = *c.ClientIP.TimeoutSeconds
			}
		}
		for _, p := range svc.Spec.Ports {
			proto := p.Protocol
			if proto == "" {
				proto = api.ProtocolTCP
			}
			if proto != api.ProtocolTCP && proto != api.ProtocolUDP {
				continue // SCTP is not proxied
			}
			sp := &servicePort{
				Namespace: svc.Namespace, Name: svc.Name, PortName: p.Name, Protocol: proto,
				ClusterIP: ip, Port: p.Port, NodePort: p.NodePort, AffinitySeconds: affinity,
			}
			sp.Endpoints = endpointsFor(byService[key{svc.Namespace, svc.Name}], p.Name, proto)
			out = append(out, sp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].String()+string(out[i].Protocol) < out[j].String()+string(out[j].Protocol)
	})
	return out
}

// endpointsFor lists the "ip:port" backends of the slice port named
// portName: the ready ones, or, when none is ready, the serving ones that
// are terminating.
func endpointsFor(slices []*api.EndpointSlice, portName string, proto api.Protocol) []string {
	ready, terminating := map[string]bool{}, map[string]bool{}
	for _, sl := range slices {
		var port int32
		found := false
		for _, p := range sl.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			pp := api.ProtocolTCP
			if p.Protocol != nil {
				pp = *p.Protocol
			}
			if name == portName && pp == proto && p.Port != nil {
				port, found = *p.Port, true
				break
			}
		}
		if !found {
			continue
		}
		for _, ep := range sl.Endpoints {
			c := ep.Conditions
			isReady := c.Ready == nil || *c.Ready
			serving := c.Serving != nil && *c.Serving
			term := c.Terminating != nil && *c.Terminating
			for _, addr := range ep.Addresses {
				hp := addr + ":" + strconv.Itoa(int(port))
				switch {
				case isReady && !term:
					ready[hp] = true
				case serving && term:
					terminating[hp] = true
				}
			}
		}
	}
	use := ready
	if len(use) == 0 {
		use = terminating
	}
	out := make([]string, 0, len(use))
	for hp := range use {
		out = append(out, hp)
	}
	sort.Strings(out)
	return out
}
