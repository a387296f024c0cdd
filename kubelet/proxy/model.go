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
	// ExternalIPs are spec.externalIPs; LoadBalancerIPs the VIP-mode
	// addresses of status.loadBalancer.ingress, with SourceRanges
	// (spec.loadBalancerSourceRanges) allowed to reach them.
	ExternalIPs, LoadBalancerIPs, SourceRanges []string
	// ExternalLocal: externalTrafficPolicy Local (external traffic only to
	// this node's endpoints, client address kept); InternalLocal:
	// internalTrafficPolicy Local (ClusterIP traffic only to this node's).
	ExternalLocal, InternalLocal bool
	// HealthCheckNodePort serves the count of local endpoints to load
	// balancers (externalTrafficPolicy Local).
	HealthCheckNodePort int32
	// Endpoints are "ip:port" of ready backends, sorted; LocalEndpoints
	// the ones on this node.
	Endpoints, LocalEndpoints []string
}

// hasExternal tells whether the port is reachable from outside the
// cluster network: a node port, external IPs or load balancer addresses.
func (sp *servicePort) hasExternal() bool {
	return sp.NodePort != 0 || len(sp.ExternalIPs) > 0 || len(sp.LoadBalancerIPs) > 0
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
// only when none is ready). nodeName tells this node's endpoints apart.
func buildServicePorts(services []*api.Service, slices []*api.EndpointSlice, nodeName string) []*servicePort {
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
		var lbIPs []string
		if svc.Spec.Type == api.ServiceTypeLoadBalancer {
			for _, in := range svc.Status.LoadBalancer.Ingress {
				// ipMode Proxy: the load balancer sends to the nodes itself,
				// the address is not the node's to answer.
				if in.IP != "" && (in.IPMode == nil || *in.IPMode == "VIP") {
					lbIPs = append(lbIPs, in.IP)
				}
			}
		}
		external := svc.Spec.Type == api.ServiceTypeNodePort || svc.Spec.Type == api.ServiceTypeLoadBalancer || len(svc.Spec.ExternalIPs) > 0
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
				ExternalIPs: svc.Spec.ExternalIPs, LoadBalancerIPs: lbIPs,
				ExternalLocal:       external && svc.Spec.ExternalTrafficPolicy == api.ServiceExternalTrafficPolicyLocal,
				InternalLocal:       svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == api.ServiceInternalTrafficPolicyLocal,
				HealthCheckNodePort: svc.Spec.HealthCheckNodePort,
			}
			if len(lbIPs) > 0 {
				sp.SourceRanges = svc.Spec.LoadBalancerSourceRanges
			}
			sp.Endpoints, sp.LocalEndpoints = endpointsFor(byService[key{svc.Namespace, svc.Name}], p.Name, proto, nodeName)
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
// are terminating; and, chosen the same way among them, those on node
// nodeName.
func endpointsFor(slices []*api.EndpointSlice, portName string, proto api.Protocol, nodeName string) (all, local []string) {
	ready, terminating := map[string]bool{}, map[string]bool{}
	localReady, localTerminating := map[string]bool{}, map[string]bool{}
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
			isLocal := nodeName != "" && ep.NodeName != nil && *ep.NodeName == nodeName
			for _, addr := range ep.Addresses {
				hp := addr + ":" + strconv.Itoa(int(port))
				switch {
				case isReady && !term:
					ready[hp] = true
					if isLocal {
						localReady[hp] = true
					}
				case serving && term:
					terminating[hp] = true
					if isLocal {
						localTerminating[hp] = true
					}
				}
			}
		}
	}
	return pick(ready, terminating), pick(localReady, localTerminating)
}

// pick is the sorted ready endpoints, or the terminating ones if none is
// ready.
func pick(ready, terminating map[string]bool) []string {
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
