package clusterdns

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Server.
type Config struct {
	Client *client.Client
	// Domain is the cluster domain, "cluster.local".
	Domain string
	// Upstreams are "host:port" resolvers for names outside the domain.
	Upstreams []string
	// TTL of the answers about cluster names (CoreDNS's default: 5 s).
	TTL    uint32
	Logger *slog.Logger
	// Metrics, if set, receives the request counter.
	Metrics prometheus.Registerer
}

// Server answers DNS queries.
type Server struct {
	cfg      Config
	zone     string // "cluster.local."
	services *informer.Informer[api.Service]
	slices   *informer.Informer[api.EndpointSlice]
	factory  *informer.Factory
	requests *prometheus.CounterVec
	upstream *dns.Client
}

const bySvcIndex = "service"

// New sets up the informers; Run starts them.
func New(cfg Config) (*Server, error) {
	if cfg.Domain == "" {
		cfg.Domain = "cluster.local"
	}
	if cfg.TTL == 0 {
		cfg.TTL = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	f := informer.NewFactory(cfg.Client, informer.FactoryOptions{Logger: cfg.Logger})
	s := &Server{
		cfg:      cfg,
		zone:     dns.Fqdn(strings.ToLower(cfg.Domain)),
		factory:  f,
		services: informer.Shared[api.Service](f, "", client.ListOptions{}),
		slices:   informer.Shared[api.EndpointSlice](f, "", client.ListOptions{}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clusterdns_requests_total", Help: "DNS requests answered, by query type and response code.",
		}, []string{"type", "rcode"}),
		upstream: &dns.Client{Timeout: 2 * time.Second},
	}
	if err := s.slices.AddIndexers(cache.Indexers[api.EndpointSlice]{bySvcIndex: func(sl *api.EndpointSlice) []string {
		if n := sl.Labels[api.LabelServiceName]; n != "" {
			return []string{sl.Namespace + "/" + n}
		}
		return nil
	}}); err != nil {
		return nil, err
	}
	if cfg.Metrics != nil {
		if err := cfg.Metrics.Register(s.requests); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Ready reports whether the caches have synced.
func (s *Server) Ready() error {
	if !s.services.HasSynced() || !s.slices.HasSynced() {
		return fmt.Errorf("caches not synced")
	}
	return nil
}

// Start starts the informers and waits for them.
func (s *Server) Start(ctx context.Context) error {
	s.factory.Start(ctx)
	if !informer.WaitForCacheSync(ctx, s.services, s.slices) {
		return ctx.Err()
	}
	return nil
}

// Serve answers on addr over UDP and TCP until ctx ends.
func (s *Server) Serve(ctx context.Context, addr string) error {
	udp, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		udp.Close()
		return err
	}
	return s.ServeOn(ctx, udp, tcp)
}

// ServeOn serves on existing sockets (tests use loopback ports).
func (s *Server) ServeOn(ctx context.Context, udp net.PacketConn, tcp net.Listener) error {
	servers := []*dns.Server{{PacketConn: udp, Handler: s}, {Listener: tcp, Handler: s}}
	errc := make(chan error, 2)
	for _, srv := range servers {
		go func() { errc <- srv.ActivateAndServe() }()
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		for _, srv := range servers {
			_ = srv.Shutdown()
		}
		return err
	}
	for _, srv := range servers {
		_ = srv.Shutdown()
	}
	return nil
}

// ServeDNS implements dns.Handler.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	var resp *dns.Msg
	qtype := "other"
	if len(req.Question) == 1 {
		q := req.Question[0]
		qtype = dns.TypeToString[q.Qtype]
		name := strings.ToLower(q.Name)
		if name == s.zone || strings.HasSuffix(name, "."+s.zone) {
			resp = s.answer(req, q, name)
		} else {
			resp = s.forward(req)
		}
	} else {
		resp = new(dns.Msg)
		resp.SetRcode(req, dns.RcodeFormatError)
	}
	s.requests.WithLabelValues(qtype, dns.RcodeToString[resp.Rcode]).Inc()
	_ = w.WriteMsg(resp)
}

// forward relays a query for a name outside the cluster domain.
func (s *Server) forward(req *dns.Msg) *dns.Msg {
	for _, up := range s.cfg.Upstreams {
		resp, _, err := s.upstream.Exchange(req, up)
		if err == nil && resp != nil {
			return resp
		}
	}
	resp := new(dns.Msg)
	resp.SetRcode(req, dns.RcodeServerFailure)
	return resp
}

func (s *Server) soa() dns.RR {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: s.zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: s.cfg.TTL},
		Ns:  "ns.dns." + s.zone, Mbox: "hostmaster." + s.zone,
		Serial: uint32(time.Now().Unix()), Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: s.cfg.TTL,
	}
}

// answer resolves a name inside the cluster domain.
func (s *Server) answer(req *dns.Msg, q dns.Question, name string) *dns.Msg {
	resp := new(dns.Msg)
	resp.SetReply(req)
	resp.Authoritative = true
	resp.RecursionAvailable = true
	rel := strings.TrimSuffix(strings.TrimSuffix(name, s.zone), ".")
	var labels []string
	if rel != "" {
		labels = strings.Split(rel, ".")
	}
	recs, exists := s.records(labels, name)
	if !exists {
		resp.Rcode = dns.RcodeNameError
		resp.Ns = []dns.RR{s.soa()}
		return resp
	}
	for _, r := range recs {
		if r.Header().Rrtype == q.Qtype || (q.Qtype == dns.TypeANY) || (r.Header().Rrtype == dns.TypeCNAME && q.Qtype != dns.TypeSRV) {
			resp.Answer = append(resp.Answer, r)
		}
	}
	if q.Qtype == dns.TypeSRV {
		// The targets' addresses, so a client needs no second query.
		for _, r := range resp.Answer {
			if srv, ok := r.(*dns.SRV); ok {
				t, _ := s.records(strings.Split(strings.TrimSuffix(strings.TrimSuffix(srv.Target, s.zone), "."), "."), srv.Target)
				for _, a := range t {
					if a.Header().Rrtype == dns.TypeA {
						resp.Extra = append(resp.Extra, a)
					}
				}
			}
		}
	}
	if len(resp.Answer) == 0 {
		resp.Ns = []dns.RR{s.soa()} // NODATA: the name exists, not this type
	}
	return resp
}

func (s *Server) a(name, ip string) dns.RR {
	return &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: s.cfg.TTL}, A: net.ParseIP(ip).To4()}
}

// records returns every record of name (labels relative to the zone) and
// whether the name exists at all.
func (s *Server) records(labels []string, name string) ([]dns.RR, bool) {
	n := len(labels)
	switch {
	case n == 0:
		return nil, true // the zone apex
	case n == 1 && (labels[0] == "svc" || labels[0] == "pod"):
		return nil, true
	case n == 2 && (labels[1] == "svc" || labels[1] == "pod"):
		return nil, true // a namespace
	case n == 3 && labels[2] == "pod":
		// A-B-C-D.ns.pod: the IP is the name (CoreDNS "pods insecure").
		ip := net.ParseIP(strings.ReplaceAll(labels[0], "-", "."))
		if ip == nil || ip.To4() == nil {
			return nil, false
		}
		return []dns.RR{s.a(name, ip.String())}, true
	case n == 3 && labels[2] == "svc":
		return s.serviceRecords(labels[1], labels[0], name)
	case n == 4 && labels[3] == "svc":
		// HOSTNAME.svc.ns.svc: one endpoint of a headless Service.
		return s.endpointRecords(labels[2], labels[1], labels[0], name)
	case n == 5 && labels[4] == "svc" && strings.HasPrefix(labels[0], "_") && strings.HasPrefix(labels[1], "_"):
		return s.srvRecords(labels[3], labels[2], labels[0][1:], labels[1][1:], name)
	}
	return nil, false
}

func (s *Server) service(ns, name string) (*api.Service, bool) {
	svc, err := s.services.Lister().Namespace(ns).Get(name)
	return svc, err == nil
}

func headless(svc *api.Service) bool { return svc.Spec.ClusterIP == api.ClusterIPNone }

// endpoint is one ready address of a Service, with its DNS host label.
type endpoint struct {
	ip, host string
	ports    map[string]int32 // "name/proto" -> port
}

func (s *Server) endpoints(ns, svc string) []endpoint {
	slices, _ := s.slices.Store().ByIndex(bySvcIndex, ns+"/"+svc)
	seen := map[string]bool{}
	var out []endpoint
	for _, sl := range slices {
		if sl.AddressType != api.AddressTypeIPv4 {
			continue
		}
		ports := map[string]int32{}
		for _, p := range sl.Ports {
			if p.Port == nil {
				continue
			}
			pn, proto := "", api.ProtocolTCP
			if p.Name != nil {
				pn = *p.Name
			}
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			ports[pn+"/"+strings.ToLower(string(proto))] = *p.Port
		}
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, addr := range ep.Addresses {
				if seen[addr] {
					continue
				}
				seen[addr] = true
				host := strings.ReplaceAll(addr, ".", "-")
				if ep.Hostname != nil && *ep.Hostname != "" {
					host = *ep.Hostname
				}
				out = append(out, endpoint{ip: addr, host: host, ports: ports})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ip < out[j].ip })
	return out
}

func (s *Server) serviceRecords(ns, name, fqdn string) ([]dns.RR, bool) {
	svc, ok := s.service(ns, name)
	if !ok {
		return nil, false
	}
	switch {
	case svc.Spec.Type == api.ServiceTypeExternalName:
		return []dns.RR{&dns.CNAME{Hdr: dns.RR_Header{Name: fqdn, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: s.cfg.TTL},
			Target: dns.Fqdn(svc.Spec.ExternalName)}}, true
	case headless(svc):
		var out []dns.RR
		for _, ep := range s.endpoints(ns, name) {
			out = append(out, s.a(fqdn, ep.ip))
		}
		return out, true
	case svc.Spec.ClusterIP != "":
		return []dns.RR{s.a(fqdn, svc.Spec.ClusterIP)}, true
	}
	return nil, true
}

func (s *Server) endpointRecords(ns, svcName, host, fqdn string) ([]dns.RR, bool) {
	svc, ok := s.service(ns, svcName)
	if !ok || !headless(svc) {
		return nil, false
	}
	for _, ep := range s.endpoints(ns, svcName) {
		if ep.host == host {
			return []dns.RR{s.a(fqdn, ep.ip)}, true
		}
	}
	return nil, false
}

// srvRecords answers _PORT._PROTO.svc.ns.svc.DOMAIN for a named port.
func (s *Server) srvRecords(ns, svcName, portName, proto, fqdn string) ([]dns.RR, bool) {
	svc, ok := s.service(ns, svcName)
	if !ok {
		return nil, false
	}
	var sp *api.ServicePort
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		pp := p.Protocol
		if pp == "" {
			pp = api.ProtocolTCP
		}
		if p.Name == portName && strings.EqualFold(string(pp), proto) {
			sp = p
		}
	}
	if sp == nil {
		return nil, false
	}
	svcFQDN := svcName + "." + ns + ".svc." + s.zone
	srv := func(target string, port int32) dns.RR {
		return &dns.SRV{Hdr: dns.RR_Header{Name: fqdn, Rrtype: dns.TypeSRV, Class: dns.ClassINET, Ttl: s.cfg.TTL},
			Priority: 0, Weight: 100, Port: uint16(port), Target: target}
	}
	if !headless(svc) {
		return []dns.RR{srv(svcFQDN, sp.Port)}, true
	}
	var out []dns.RR
	key := portName + "/" + strings.ToLower(proto)
	for _, ep := range s.endpoints(ns, svcName) {
		port, ok := ep.ports[key]
		if !ok {
			continue
		}
		out = append(out, srv(ep.host+"."+svcFQDN, port))
	}
	return out, true
}

// UpstreamsFromResolvConf reads the nameservers of a resolv.conf file as
// "ip:53" upstreams.
func UpstreamsFromResolvConf(path string) ([]string, error) {
	// Read it whole first: the parser takes a directory for an empty file.
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := dns.ClientConfigFromReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range cfg.Servers {
		out = append(out, net.JoinHostPort(s, strconv.Itoa(53)))
	}
	return out, nil
}
