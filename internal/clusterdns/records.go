package clusterdns

import (
	"context"
	"errors"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/miekg/dns"
	"github.com/minik8s/minik8s/api"
)

// errNXDomain says a name does not exist in the cluster zone (NXDOMAIN);
// a nil error with no records is NODATA.
var errNXDomain = errors.New("no such name")

// maxCNAMEChain bounds the ExternalName CNAMEs followed inside the zone.
const maxCNAMEChain = 8

// target is one thing a cluster name stands for, as a CoreDNS msg.Service:
// an address (a ClusterIP, an endpoint or pod IP) with the port SRV
// answers carry and the name SRV answers point at, or the host name of an
// ExternalName Service (cname).
type target struct {
	host    string
	cname   bool
	port    int32 // -1: an endpoint of a Service without ports
	srvName string
}

// request is a name relative to the zone, split as CoreDNS's
// parseRequest splits it:
//
//	[_PORT._PROTO. | ENDPOINT.] SERVICE.NAMESPACE.(svc|pod)
type request struct {
	port, protocol, endpoint, service, namespace, podOrSvc string
}

func parseRequest(rel string) (request, error) {
	var r request
	if rel == "" || rel == "svc" || rel == "pod" {
		return r, nil
	}
	segs := strings.Split(rel, ".")
	last := len(segs) - 1
	r.podOrSvc = segs[last]
	if r.podOrSvc != "svc" && r.podOrSvc != "pod" {
		return r, errNXDomain
	}
	last--
	r.namespace = segs[last]
	if last--; last < 0 {
		return r, nil
	}
	r.service = segs[last]
	switch last--; last {
	case -1:
	case 0:
		r.endpoint = segs[0]
	case 1:
		r.port, r.protocol = strings.TrimPrefix(segs[0], "_"), strings.TrimPrefix(segs[1], "_")
	default:
		return r, errNXDomain // too long to be anything
	}
	return r, nil
}

// lookup returns what a name under the zone (relative, lower case) stands
// for; nil and no error is a name that exists with no records (the zone's
// svc and pod subdomains, a namespace).
func (s *Server) lookup(rel string) ([]target, error) {
	r, err := parseRequest(rel)
	if err != nil || r.podOrSvc == "" {
		return nil, err
	}
	if !s.namespaceExists(r.namespace) {
		return nil, errNXDomain
	}
	switch {
	case r.service == "":
		return nil, nil
	case r.podOrSvc == "pod":
		return podTargets(r.service)
	}
	return s.serviceTargets(r)
}

func (s *Server) namespaceExists(name string) bool {
	_, err := s.namespaces.Lister().Get(name)
	return err == nil
}

// podTargets answers A-B-C-D.NS.pod (CoreDNS's "pods insecure"): the
// address is the name, IPv6 with "-" for ":".
func podTargets(name string) ([]target, error) {
	var ip string
	if strings.Count(name, "-") == 3 && !strings.Contains(name, "--") {
		ip = strings.ReplaceAll(name, "-", ".")
	} else {
		ip = strings.ReplaceAll(name, "-", ":")
	}
	if net.ParseIP(ip) == nil {
		return nil, errNXDomain
	}
	return []target{{host: ip}}, nil
}

func matchPort(wantPort, port, wantProto, proto string) bool {
	return (wantPort == "" || strings.EqualFold(wantPort, port)) && (wantProto == "" || strings.EqualFold(wantProto, proto))
}

// serviceTargets is CoreDNS's findServices for one Service: its external
// name, its endpoints (headless, or one endpoint asked by host name), or
// its ClusterIPs, each once per port that matches _PORT._PROTO.
func (s *Server) serviceTargets(r request) ([]target, error) {
	svc, err := s.services.Lister().Namespace(r.namespace).Get(r.service)
	if err != nil {
		return nil, errNXDomain
	}
	svcName := svc.Name + "." + svc.Namespace + ".svc." + s.zone
	var out []target
	switch {
	case svc.Spec.Type == api.ServiceTypeExternalName:
		// An external name that is an address is no CNAME: CoreDNS answers nothing.
		if r.endpoint != "" || svc.Spec.ExternalName == "" || net.ParseIP(svc.Spec.ExternalName) != nil {
			return nil, errNXDomain
		}
		out = append(out, target{host: dns.Fqdn(strings.ToLower(svc.Spec.ExternalName)), cname: true})
	case headless(svc) || r.endpoint != "":
		for _, ep := range s.endpoints(svc.Namespace, svc.Name) {
			if r.endpoint != "" && !strings.EqualFold(r.endpoint, ep.host) {
				continue
			}
			for _, p := range ep.ports {
				if matchPort(r.port, p.name, r.protocol, p.protocol) {
					out = append(out, target{host: ep.ip, port: p.port, srvName: ep.host + "." + svcName})
				}
			}
		}
	default:
		for _, p := range svc.Spec.Ports {
			if !matchPort(r.port, p.Name, r.protocol, protocolOf(p.Protocol)) {
				continue
			}
			for _, ip := range clusterIPs(svc) {
				out = append(out, target{host: ip, port: p.Port, srvName: svcName})
			}
		}
	}
	if len(out) == 0 {
		return nil, errNXDomain
	}
	return out, nil
}

func headless(svc *api.Service) bool { return svc.Spec.ClusterIP == api.ClusterIPNone }

func protocolOf(p api.Protocol) string {
	if p == "" {
		return string(api.ProtocolTCP)
	}
	return string(p)
}

func clusterIPs(svc *api.Service) []string {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	var out []string
	for _, ip := range ips {
		if ip != api.ClusterIPNone && net.ParseIP(ip) != nil {
			out = append(out, ip)
		}
	}
	return out
}

type endpointPort struct {
	name, protocol string
	port           int32
}

// endpoint is one ready address of a Service with its DNS host label: the
// endpoint's hostname, else the address with "-" for "." or ":".
type endpoint struct {
	ip, host string
	ports    []endpointPort
}

// portless stands for the ports of a slice without any, so that a
// headless Service without ports still has A records (CoreDNS's sentinel).
var portless = []endpointPort{{port: -1}}

// endpoints are the ready addresses of a Service's EndpointSlices, each
// with its slice's ports, in address order.
func (s *Server) endpoints(ns, svc string) []endpoint {
	slices, _ := s.slices.Store().ByIndex(bySvcIndex, ns+"/"+svc)
	var out []endpoint
	for _, sl := range slices {
		if sl.AddressType != api.AddressTypeIPv4 && sl.AddressType != api.AddressTypeIPv6 {
			continue
		}
		var ports []endpointPort
		for _, p := range sl.Ports {
			ep := endpointPort{protocol: string(api.ProtocolTCP)}
			if p.Name != nil {
				ep.name = *p.Name
			}
			if p.Protocol != nil {
				ep.protocol = string(*p.Protocol)
			}
			if p.Port != nil {
				ep.port = *p.Port
			}
			ports = append(ports, ep)
		}
		if len(ports) == 0 {
			ports = portless
		}
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, addr := range e.Addresses {
				if net.ParseIP(addr) == nil {
					continue
				}
				out = append(out, endpoint{ip: addr, host: endpointHost(e, addr), ports: ports})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ip < out[j].ip })
	return out
}

func endpointHost(e api.Endpoint, addr string) string {
	if e.Hostname != nil && *e.Hostname != "" {
		return *e.Hostname
	}
	return strings.NewReplacer(".", "-", ":", "-").Replace(addr)
}

// answer is the records of a name for one query type.
type answer struct {
	answer, extra []dns.RR
}

// resolve builds the answer to (owner, qtype) from the name's targets, as
// CoreDNS's A, AAAA, CNAME and SRV lookups do: addresses once each; a
// CNAME first, then what its target resolves to (inside the zone here,
// outside through the upstreams); SRV with weight 100/n and the targets'
// addresses as additional records. Other types have no records (NODATA).
func (s *Server) resolve(ctx context.Context, owner string, qtype uint16, targets []target, depth int, network string) answer {
	var a answer
	switch qtype {
	case dns.TypeA, dns.TypeAAAA:
		seen := map[string]bool{}
		for _, t := range targets {
			if t.cname {
				a.answer = append(a.answer, s.cname(owner, t.host))
				a.answer = append(a.answer, s.chase(ctx, t.host, qtype, depth, network)...)
				continue
			}
			if rr := s.address(owner, t.host, qtype); rr != nil && !seen[t.host] {
				seen[t.host] = true
				a.answer = append(a.answer, rr)
			}
		}
	case dns.TypeCNAME:
		for _, t := range targets {
			if t.cname {
				a.answer = append(a.answer, s.cname(owner, t.host))
			}
		}
	case dns.TypeSRV:
		n := 0
		for _, t := range targets {
			if !t.cname && t.port >= 0 {
				n++
			}
		}
		weight := uint16(1)
		if n > 0 && n <= 100 {
			weight = uint16(100 / n)
		}
		seenSRV, seenExtra := map[string]bool{}, map[string]bool{}
		for _, t := range targets {
			if t.cname || t.port < 0 {
				continue
			}
			if k := t.srvName + ":" + strconv.Itoa(int(t.port)); !seenSRV[k] {
				seenSRV[k] = true
				a.answer = append(a.answer, &dns.SRV{Hdr: s.hdr(owner, dns.TypeSRV), Priority: 0, Weight: weight, Port: uint16(t.port), Target: t.srvName})
			}
			if k := t.srvName + "=" + t.host; !seenExtra[k] {
				seenExtra[k] = true
				if ip := net.ParseIP(t.host); ip.To4() != nil {
					a.extra = append(a.extra, s.address(t.srvName, t.host, dns.TypeA))
				} else {
					a.extra = append(a.extra, s.address(t.srvName, t.host, dns.TypeAAAA))
				}
			}
		}
	}
	return a
}

// chase resolves an ExternalName's target: a name inside the zone from
// the caches, any other through the upstreams (CoreDNS asks its own
// server, whose forward plugin does the same).
func (s *Server) chase(ctx context.Context, name string, qtype uint16, depth int, network string) []dns.RR {
	if depth >= maxCNAMEChain {
		return nil
	}
	if rel, ok := s.relative(name); ok {
		targets, err := s.lookup(rel)
		if err != nil {
			return nil
		}
		return s.resolve(ctx, name, qtype, targets, depth+1, network).answer
	}
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	resp, err := s.exchange(ctx, m, network)
	if err != nil || resp.Rcode != dns.RcodeSuccess {
		return nil
	}
	return resp.Answer
}

func (s *Server) hdr(name string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: s.cfg.TTL}
}

func (s *Server) cname(owner, target string) dns.RR {
	return &dns.CNAME{Hdr: s.hdr(owner, dns.TypeCNAME), Target: target}
}

// address is the A or AAAA record (qtype) of ip, nil if ip is of the
// other family.
func (s *Server) address(owner, ip string, qtype uint16) dns.RR {
	p := net.ParseIP(ip)
	switch {
	case p == nil:
		return nil
	case qtype == dns.TypeA && p.To4() != nil:
		return &dns.A{Hdr: s.hdr(owner, dns.TypeA), A: p.To4()}
	case qtype == dns.TypeAAAA && p.To4() == nil:
		return &dns.AAAA{Hdr: s.hdr(owner, dns.TypeAAAA), AAAA: p}
	}
	return nil
}

// relative is name (lower case, fully qualified) relative to the zone,
// and whether it is inside it.
func (s *Server) relative(name string) (string, bool) {
	name = strings.ToLower(name)
	if name == s.zone {
		return "", true
	}
	rel, ok := strings.CutSuffix(name, "."+s.zone)
	return rel, ok
}

// reverseAddress is the address a name under in-addr.arpa. or ip6.arpa.
// stands for, "" if it is not a whole one.
func reverseAddress(name string) string {
	name = strings.ToLower(name)
	if rest, ok := strings.CutSuffix(name, ".in-addr.arpa."); ok {
		labels := strings.Split(rest, ".")
		if len(labels) != 4 {
			return ""
		}
		for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
			labels[i], labels[j] = labels[j], labels[i]
		}
		if ip := net.ParseIP(strings.Join(labels, ".")); ip != nil && ip.To4() != nil {
			return ip.String()
		}
		return ""
	}
	if rest, ok := strings.CutSuffix(name, ".ip6.arpa."); ok {
		nibbles := strings.Split(rest, ".")
		if len(nibbles) != 32 {
			return ""
		}
		var b strings.Builder
		for i := len(nibbles) - 1; i >= 0; i-- {
			if len(nibbles[i]) != 1 {
				return ""
			}
			b.WriteString(nibbles[i])
			if i%4 == 0 && i > 0 {
				b.WriteByte(':')
			}
		}
		if ip := net.ParseIP(b.String()); ip != nil {
			return ip.String()
		}
	}
	return ""
}

// ptrTargets are the names of a reverse-lookup address, as CoreDNS's
// serviceRecordForIP: the Service with that ClusterIP, else every
// endpoint with that address (HOST.SVC.NS.svc.ZONE).
func (s *Server) ptrTargets(ip string) []string {
	if svcs, _ := s.services.Store().ByIndex(byClusterIPIndex, ip); len(svcs) > 0 {
		sort.Slice(svcs, func(i, j int) bool { return svcs[i].Namespace+"/"+svcs[i].Name < svcs[j].Namespace+"/"+svcs[j].Name })
		return []string{svcs[0].Name + "." + svcs[0].Namespace + ".svc." + s.zone}
	}
	slices, _ := s.slices.Store().ByIndex(byAddressIndex, ip)
	var out []string
	seen := map[string]bool{}
	for _, sl := range slices {
		svc := sl.Labels[api.LabelServiceName]
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, addr := range e.Addresses {
				if p := net.ParseIP(addr); p == nil || p.String() != ip {
					continue
				}
				if n := endpointHost(e, addr) + "." + svc + "." + sl.Namespace + ".svc." + s.zone; !seen[n] {
					seen[n] = true
					out = append(out, n)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
