package clusterdns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
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
	cfg        Config
	zone       string // "cluster.local."
	services   *informer.Informer[api.Service]
	slices     *informer.Informer[api.EndpointSlice]
	namespaces *informer.Informer[api.Namespace]
	factory    *informer.Factory
	requests   *prometheus.CounterVec
}

const (
	bySvcIndex       = "service"
	byClusterIPIndex = "clusterIP"
	byAddressIndex   = "address"
	// upstreamTimeout bounds one exchange with one upstream resolver.
	upstreamTimeout = 2 * time.Second
)

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
		cfg:        cfg,
		zone:       dns.Fqdn(strings.ToLower(cfg.Domain)),
		factory:    f,
		services:   informer.Shared[api.Service](f, "", client.ListOptions{}),
		slices:     informer.Shared[api.EndpointSlice](f, "", client.ListOptions{}),
		namespaces: informer.Shared[api.Namespace](f, "", client.ListOptions{}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "clusterdns_requests_total", Help: "DNS requests answered, by query type and response code.",
		}, []string{"type", "rcode"}),
	}
	if err := s.slices.AddIndexers(cache.Indexers[api.EndpointSlice]{
		bySvcIndex: func(sl *api.EndpointSlice) []string {
			if n := sl.Labels[api.LabelServiceName]; n != "" {
				return []string{sl.Namespace + "/" + n}
			}
			return nil
		},
		byAddressIndex: func(sl *api.EndpointSlice) []string {
			if sl.Labels[api.LabelServiceName] == "" {
				return nil
			}
			var out []string
			for _, e := range sl.Endpoints {
				for _, a := range e.Addresses {
					if ip := net.ParseIP(a); ip != nil {
						out = append(out, ip.String())
					}
				}
			}
			return out
		},
	}); err != nil {
		return nil, err
	}
	if err := s.services.AddIndexers(cache.Indexers[api.Service]{byClusterIPIndex: func(svc *api.Service) []string {
		var out []string
		for _, ip := range clusterIPs(svc) {
			out = append(out, net.ParseIP(ip).String())
		}
		return out
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
	if !s.services.HasSynced() || !s.slices.HasSynced() || !s.namespaces.HasSynced() {
		return fmt.Errorf("caches not synced")
	}
	return nil
}

// Start starts the informers and waits for them.
func (s *Server) Start(ctx context.Context) error {
	s.factory.Start(ctx)
	if !informer.WaitForCacheSync(ctx, s.services, s.slices, s.namespaces) {
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

// ServeDNS implements dns.Handler: names in the cluster zone and reverse
// names of Service and endpoint addresses are answered from the caches,
// everything else (and reverse names it does not know, CoreDNS's
// "fallthrough in-addr.arpa ip6.arpa") goes to the upstreams over the
// client's transport. The reply fits the client's buffer: 512 bytes or
// its EDNS0 size over UDP, truncated (TC) beyond, as CoreDNS's Scrub.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(s.cfg.Upstreams)+1)*upstreamTimeout)
	defer cancel()
	network := "udp"
	if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
		network = "tcp"
	}
	var resp *dns.Msg
	qtype := "other"
	switch {
	case req.Opcode != dns.OpcodeQuery || len(req.Question) != 1:
		resp = new(dns.Msg)
		resp.SetRcode(req, dns.RcodeFormatError)
		if req.Opcode != dns.OpcodeQuery {
			resp.Rcode = dns.RcodeNotImplemented
		}
	default:
		q := req.Question[0]
		qtype = dns.TypeToString[q.Qtype]
		if rel, ok := s.relative(q.Name); ok {
			resp = s.answer(ctx, req, q, rel, network)
		} else if resp = s.reverse(req, q); resp == nil {
			resp = s.forward(ctx, req, network)
		}
	}
	s.requests.WithLabelValues(qtype, dns.RcodeToString[resp.Rcode]).Inc()
	fit(req, resp, network)
	_ = w.WriteMsg(resp)
}

// fit sizes resp for the client: EDNS0 answered with EDNS0, and at most
// the client's UDP buffer (512 bytes without EDNS0) over UDP.
func fit(req, resp *dns.Msg, network string) {
	size := dns.MinMsgSize
	if opt := req.IsEdns0(); opt != nil {
		size = max(int(opt.UDPSize()), dns.MinMsgSize)
		if resp.IsEdns0() == nil {
			resp.SetEdns0(uint16(size), opt.Do())
		}
	}
	if network == "tcp" {
		size = dns.MaxMsgSize
	}
	resp.Truncate(size)
}

// forward relays a query for a name outside the cluster domain.
func (s *Server) forward(ctx context.Context, req *dns.Msg, network string) *dns.Msg {
	resp, err := s.exchange(ctx, req, network)
	if err != nil {
		s.cfg.Logger.Debug("no upstream answered", "name", req.Question[0].Name, "err", err)
		resp = new(dns.Msg)
		resp.SetRcode(req, dns.RcodeServerFailure)
	}
	return resp
}

// exchange asks the upstreams in order over network (a client that came
// over TCP is asked for over TCP, so a large answer is not truncated on
// the way) until one answers; a truncated UDP answer is passed on as is,
// for the client to ask again over TCP.
func (s *Server) exchange(ctx context.Context, req *dns.Msg, network string) (*dns.Msg, error) {
	if len(s.cfg.Upstreams) == 0 {
		return nil, errors.New("no upstream resolvers")
	}
	c := &dns.Client{Net: network, Timeout: upstreamTimeout}
	var errs []error
	for _, up := range s.cfg.Upstreams {
		resp, _, err := c.ExchangeContext(ctx, req, up)
		if err == nil && resp != nil {
			return resp, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", up, err))
	}
	return nil, errors.Join(errs...)
}

// soa is the SOA record of zone (the cluster zone, or a reverse zone)
// CoreDNS puts in the authority section of NXDOMAIN and NODATA answers.
func (s *Server) soa(zone string) dns.RR {
	return &dns.SOA{
		Hdr: s.hdr(zone, dns.TypeSOA),
		Ns:  "ns.dns." + zone, Mbox: "hostmaster." + zone,
		Serial: uint32(time.Now().Unix()), Refresh: 7200, Retry: 1800, Expire: 86400, Minttl: s.cfg.TTL,
	}
}

// reply is an authoritative answer to req (CoreDNS's kubernetes plugin
// sets AA and not RA).
func reply(req *dns.Msg) *dns.Msg {
	resp := new(dns.Msg)
	resp.SetReply(req)
	resp.Authoritative = true
	return resp
}

// answer resolves a name inside the cluster domain (rel: relative to it).
func (s *Server) answer(ctx context.Context, req *dns.Msg, q dns.Question, rel, network string) *dns.Msg {
	resp := reply(req)
	switch {
	case rel == "" && q.Qtype == dns.TypeSOA:
		resp.Answer = []dns.RR{s.soa(s.zone)}
		return resp
	case rel == "dns-version" && q.Qtype == dns.TypeTXT:
		// The version of the Kubernetes DNS specification served.
		resp.Answer = []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 28800}, Txt: []string{"1.1.0"}}}
		return resp
	}
	targets, err := s.lookup(rel)
	if err != nil {
		resp.Rcode = dns.RcodeNameError
		resp.Ns = []dns.RR{s.soa(s.zone)}
		return resp
	}
	a := s.resolve(ctx, q.Name, q.Qtype, targets, 0, network)
	resp.Answer, resp.Extra = a.answer, a.extra
	if len(resp.Answer) == 0 {
		resp.Ns = []dns.RR{s.soa(s.zone)} // NODATA: the name exists, not this type
	}
	return resp
}

// reverse answers a PTR query for a Service's ClusterIP or an endpoint's
// address; nil when the name is not one (it is forwarded then).
func (s *Server) reverse(req *dns.Msg, q dns.Question) *dns.Msg {
	ip := reverseAddress(q.Name)
	if ip == "" {
		return nil
	}
	names := s.ptrTargets(ip)
	if len(names) == 0 {
		return nil
	}
	resp := reply(req)
	if q.Qtype != dns.TypePTR {
		zone := "in-addr.arpa."
		if strings.HasSuffix(strings.ToLower(q.Name), ".ip6.arpa.") {
			zone = "ip6.arpa."
		}
		resp.Ns = []dns.RR{s.soa(zone)}
		return resp
	}
	for _, n := range names {
		resp.Answer = append(resp.Answer, &dns.PTR{Hdr: s.hdr(q.Name, dns.TypePTR), Ptr: n})
	}
	return resp
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
