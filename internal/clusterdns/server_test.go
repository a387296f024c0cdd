package clusterdns

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

func ptr[T any](v T) *T { return &v }

// bigName is a name the fake upstream answers with more addresses than
// fit in 512 bytes.
const bigName = "big.example."

// upstream is a fake resolver on loopback, over UDP and TCP on one port,
// that knows example.org, bigName and the upstream's own reverse name
// 7.2.0.192.in-addr.arpa; every other name is NXDOMAIN. Over UDP it
// truncates to the asker's buffer, as real resolvers do.
func upstream(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		a := func(name string, ip net.IP) dns.RR {
			return &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: ip}
		}
		switch {
		case q.Name == "example.org." && q.Qtype == dns.TypeA:
			m.Answer = []dns.RR{a(q.Name, net.IPv4(192, 0, 2, 7))}
		case q.Name == "example.org.":
		case q.Name == bigName && q.Qtype == dns.TypeA:
			for i := range 60 {
				m.Answer = append(m.Answer, a(q.Name, net.IPv4(192, 0, 2, byte(i+1))))
			}
		case q.Name == "7.2.0.192.in-addr.arpa." && q.Qtype == dns.TypePTR:
			m.Answer = []dns.RR{&dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 60}, Ptr: "example.org."}}
		default:
			m.Rcode = dns.RcodeNameError
		}
		if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
			size := dns.MinMsgSize
			if opt := r.IsEdns0(); opt != nil {
				size = int(opt.UDPSize())
				m.SetEdns0(opt.UDPSize(), false)
			}
			m.Truncate(size)
		}
		_ = w.WriteMsg(m)
	})
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: ln, Handler: h}} {
		go srv.ActivateAndServe()
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return pc.LocalAddr().String()
}

// fixture is a cluster-dns server on loopback over an apiserver with the
// objects of the test.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	c    *client.Client
	addr string
}

func startServer(t *testing.T) *fixture {
	t.Helper()
	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &fixture{t: t, ctx: ctx, c: c}
}

func (f *fixture) serve() {
	f.t.Helper()
	srv, err := New(Config{Client: f.c, Upstreams: []string{upstream(f.t)}})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := srv.Start(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		f.t.Fatal(err)
	}
	go srv.ServeOn(f.ctx, pc, ln)
	f.addr = pc.LocalAddr().String()
}

func (f *fixture) service(svc *api.Service) *api.Service {
	f.t.Helper()
	if svc.Namespace == "" {
		svc.Namespace = "default"
	}
	out, err := client.Resource[api.Service](f.c).Namespace(svc.Namespace).Create(f.ctx, svc)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) slice(ns, svc string, ports []api.EndpointSlicePort, eps ...api.Endpoint) {
	f.t.Helper()
	at := api.AddressTypeIPv4
	if strings.Contains(eps[0].Addresses[0], ":") {
		at = api.AddressTypeIPv6
	}
	if _, err := client.Resource[api.EndpointSlice](f.c).Namespace(ns).Create(f.ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{GenerateName: svc + "-", Labels: map[string]string{api.LabelServiceName: svc}},
		AddressType: at, Ports: ports, Endpoints: eps,
	}); err != nil {
		f.t.Fatal(err)
	}
}

func ep(ip, host string, ready bool) api.Endpoint {
	e := api.Endpoint{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: ptr(ready)}}
	if host != "" {
		e.Hostname = ptr(host)
	}
	return e
}

func port(name string, n int32, proto api.Protocol) api.EndpointSlicePort {
	return api.EndpointSlicePort{Name: ptr(name), Port: ptr(n), Protocol: ptr(proto)}
}

// query asks the server, over TCP or UDP, with EDNS0 (dig's default) or
// without, retrying while the server is not listening yet.
func (f *fixture) query(name string, qtype uint16, tcp, edns bool) *dns.Msg {
	f.t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	if edns {
		m.SetEdns0(1232, false)
	}
	cl := &dns.Client{Timeout: 3 * time.Second}
	if tcp {
		cl.Net = "tcp"
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, _, err := cl.Exchange(m, f.addr)
		if err == nil {
			return resp
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// records is a section as "TYPE RDATA" items, sorted, with the owner
// name when it is not the question's.
func records(rrs []dns.RR, qname string) string {
	var out []string
	for _, rr := range rrs {
		f := strings.Fields(rr.String())
		s := strings.Join(append([]string{f[3]}, f[4:]...), " ")
		if !strings.EqualFold(rr.Header().Name, qname) {
			s = rr.Header().Name + " " + s
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// TestClusterDNS asks the server what the conformance DNS specs' probes
// ask (dig +search over UDP and TCP for A, SRV and PTR records, CNAMEs of
// ExternalName Services) and what CoreDNS's kubernetes plugin answers for
// the rest, and checks answers, response codes (NXDOMAIN vs NODATA, as a
// resolver walking the search path needs), TTLs and flags.
func TestClusterDNS(t *testing.T) {
	f := startServer(t)
	web := f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.ServiceSpec{
		Selector: map[string]string{"app": "web"},
		Ports:    []api.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: api.ProtocolUDP}}}})
	f.slice("default", "web", []api.EndpointSlicePort{port("http", 8080, api.ProtocolTCP)}, ep("10.244.4.4", "", true))
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "db"}, Spec: api.ServiceSpec{
		ClusterIP: api.ClusterIPNone, Selector: map[string]string{"app": "db"}, Ports: []api.ServicePort{{Name: "pg", Port: 5432}}}})
	f.slice("default", "db", []api.EndpointSlicePort{port("pg", 5432, api.ProtocolTCP)},
		ep("10.244.1.5", "db-0", true), ep("10.244.2.6", "", true), ep("10.244.3.7", "not-ready", false))
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "empty"}, Spec: api.ServiceSpec{
		ClusterIP: api.ClusterIPNone, Selector: map[string]string{"app": "none"}, Ports: []api.ServicePort{{Name: "http", Port: 80}}}})
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "portless"}, Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone}})
	f.slice("default", "portless", nil, ep("10.244.1.9", "", true))
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "ext"}, Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "example.org"}})
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "alias"}, Spec: api.ServiceSpec{
		Type: api.ServiceTypeExternalName, ExternalName: "web.default.svc.cluster.local"}})
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "ipname"}, Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "192.0.2.1"}})
	f.serve()

	ip := web.Spec.ClusterIP
	rev, err := dns.ReverseAddr(ip)
	if err != nil {
		t.Fatal(err)
	}
	const (
		NX = dns.RcodeNameError
		OK = dns.RcodeSuccess
	)
	for _, tc := range []struct {
		name       string
		qtype      uint16
		rcode      int
		want, xtra string
	}{
		// Services: A of the ClusterIP, SRV of every port or a named one.
		{"web.default.svc.cluster.local.", dns.TypeA, OK, "A " + ip, ""},
		{"WEB.Default.svc.cluster.local.", dns.TypeA, OK, "A " + ip, ""},
		{"web.default.svc.cluster.local.", dns.TypeAAAA, OK, "", ""},
		{"web.default.svc.cluster.local.", dns.TypeTXT, OK, "", ""},
		{"web.default.svc.cluster.local.", dns.TypeSRV, OK,
			"SRV 0 50 53 web.default.svc.cluster.local.; SRV 0 50 80 web.default.svc.cluster.local.", "A " + ip},
		{"_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV, OK, "SRV 0 100 80 web.default.svc.cluster.local.", "web.default.svc.cluster.local. A " + ip},
		{"_dns._udp.web.default.svc.cluster.local.", dns.TypeSRV, OK, "SRV 0 100 53 web.default.svc.cluster.local.", "web.default.svc.cluster.local. A " + ip},
		{"_http._udp.web.default.svc.cluster.local.", dns.TypeSRV, NX, "", ""},
		{"_nope._tcp.web.default.svc.cluster.local.", dns.TypeSRV, NX, "", ""},
		// An endpoint of a ClusterIP Service by its dashed address.
		{"10-244-4-4.web.default.svc.cluster.local.", dns.TypeA, OK, "A 10.244.4.4", ""},
		// Headless: the ready endpoints, each by hostname or dashed address.
		{"db.default.svc.cluster.local.", dns.TypeA, OK, "A 10.244.1.5; A 10.244.2.6", ""},
		{"db-0.db.default.svc.cluster.local.", dns.TypeA, OK, "A 10.244.1.5", ""},
		{"10-244-2-6.db.default.svc.cluster.local.", dns.TypeA, OK, "A 10.244.2.6", ""},
		{"not-ready.db.default.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"_pg._tcp.db.default.svc.cluster.local.", dns.TypeSRV, OK,
			"SRV 0 50 5432 10-244-2-6.db.default.svc.cluster.local.; SRV 0 50 5432 db-0.db.default.svc.cluster.local.",
			"10-244-2-6.db.default.svc.cluster.local. A 10.244.2.6; db-0.db.default.svc.cluster.local. A 10.244.1.5"},
		{"empty.default.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"portless.default.svc.cluster.local.", dns.TypeA, OK, "A 10.244.1.9", ""},
		{"portless.default.svc.cluster.local.", dns.TypeSRV, OK, "", ""},
		// ExternalName: a CNAME, followed (upstream, or inside the zone).
		{"ext.default.svc.cluster.local.", dns.TypeCNAME, OK, "CNAME example.org.", ""},
		{"ext.default.svc.cluster.local.", dns.TypeA, OK, "CNAME example.org.; example.org. A 192.0.2.7", ""},
		{"ext.default.svc.cluster.local.", dns.TypeAAAA, OK, "CNAME example.org.", ""},
		{"ext.default.svc.cluster.local.", dns.TypeSRV, OK, "", ""},
		{"alias.default.svc.cluster.local.", dns.TypeA, OK, "CNAME web.default.svc.cluster.local.; web.default.svc.cluster.local. A " + ip, ""},
		{"x.ext.default.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"ipname.default.svc.cluster.local.", dns.TypeA, NX, "", ""},
		// Pods by address.
		{"10-244-9-9.default.pod.cluster.local.", dns.TypeA, OK, "A 10.244.9.9", ""},
		{"fd00--1.default.pod.cluster.local.", dns.TypeAAAA, OK, "AAAA fd00::1", ""},
		{"not-an-ip.default.pod.cluster.local.", dns.TypeA, NX, "", ""},
		{"10-244-9-9.nope.pod.cluster.local.", dns.TypeA, NX, "", ""},
		// The zone's structure: existing names without records are NODATA.
		{"cluster.local.", dns.TypeA, OK, "", ""},
		{"svc.cluster.local.", dns.TypeA, OK, "", ""},
		{"pod.cluster.local.", dns.TypeA, OK, "", ""},
		{"default.svc.cluster.local.", dns.TypeA, OK, "", ""},
		{"nope.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"foo.cluster.local.", dns.TypeA, NX, "", ""},
		{"missing.default.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"web.nope.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"a.b._http._tcp.web.default.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"dns-version.cluster.local.", dns.TypeTXT, OK, "TXT \"1.1.0\"", ""},
		// What a resolver tries on the search path of a pod in "default"
		// for "web.default" and "_http._tcp.web.default.svc" (ndots:5).
		{"web.default.default.svc.cluster.local.", dns.TypeA, NX, "", ""},
		{"web.default.svc.cluster.local.", dns.TypeA, OK, "A " + ip, ""},
		{"_http._tcp.web.default.svc.default.svc.cluster.local.", dns.TypeSRV, NX, "", ""},
		{"_http._tcp.web.default.svc.svc.cluster.local.", dns.TypeSRV, NX, "", ""},
		// Reverse names of ClusterIPs and endpoints; others go upstream.
		{rev, dns.TypePTR, OK, "PTR web.default.svc.cluster.local.", ""},
		{"5.1.244.10.in-addr.arpa.", dns.TypePTR, OK, "PTR db-0.db.default.svc.cluster.local.", ""},
		{"6.2.244.10.in-addr.arpa.", dns.TypePTR, OK, "PTR 10-244-2-6.db.default.svc.cluster.local.", ""},
		{rev, dns.TypeA, OK, "", ""},
		{"7.3.244.10.in-addr.arpa.", dns.TypePTR, NX, "", ""},
		{"7.2.0.192.in-addr.arpa.", dns.TypePTR, OK, "PTR example.org.", ""},
		// Everything else upstream.
		{"example.org.", dns.TypeA, OK, "A 192.0.2.7", ""},
		{"nowhere.example.", dns.TypeA, NX, "", ""},
	} {
		for _, tcp := range []bool{false, true} {
			resp := f.query(tc.name, tc.qtype, tcp, true)
			got, xtra := records(resp.Answer, tc.name), records(extra(resp), tc.name)
			if resp.Rcode != tc.rcode || got != tc.want || xtra != tc.xtra {
				t.Errorf("%s %s (tcp %v): %s %q extra %q, want %s %q extra %q", tc.name, dns.TypeToString[tc.qtype], tcp,
					dns.RcodeToString[resp.Rcode], got, xtra, dns.RcodeToString[tc.rcode], tc.want, tc.xtra)
			}
			inZone := strings.HasSuffix(strings.ToLower(tc.name), "cluster.local.") || strings.HasSuffix(tc.name, ".10.in-addr.arpa.") || tc.name == rev
			if inZone && !(tc.rcode == NX && strings.HasSuffix(tc.name, ".in-addr.arpa.")) {
				if !resp.Authoritative || resp.RecursionAvailable {
					t.Errorf("%s: flags aa=%v ra=%v, want aa and not ra (CoreDNS)", tc.name, resp.Authoritative, resp.RecursionAvailable)
				}
				for _, rr := range append(append([]dns.RR{}, resp.Answer...), resp.Ns...) {
					if want := uint32(5); rr.Header().Ttl != want && rr.Header().Rrtype != dns.TypeTXT && strings.HasSuffix(rr.Header().Name, "cluster.local.") {
						t.Errorf("%s: %s has TTL %d, want %d", tc.name, rr, rr.Header().Ttl, want)
					}
				}
				if len(resp.Answer) == 0 && (len(resp.Ns) != 1 || resp.Ns[0].Header().Rrtype != dns.TypeSOA) {
					t.Errorf("%s: %s without answers has authority %v, want the zone's SOA", tc.name, dns.RcodeToString[resp.Rcode], resp.Ns)
				}
			}
		}
	}
}

// extra is the additional section without the OPT record.
func extra(m *dns.Msg) []dns.RR {
	var out []dns.RR
	for _, rr := range m.Extra {
		if rr.Header().Rrtype != dns.TypeOPT {
			out = append(out, rr)
		}
	}
	return out
}

// TestClusterDNSTruncates: over UDP an answer larger than the client's
// buffer (512 bytes without EDNS0) comes back truncated with TC set, so
// the resolver asks again over TCP, which gets it whole; the same for
// forwarded names, which are asked upstream over the client's transport.
func TestClusterDNSTruncates(t *testing.T) {
	f := startServer(t)
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "many"}, Spec: api.ServiceSpec{
		ClusterIP: api.ClusterIPNone, Selector: map[string]string{"app": "many"}, Ports: []api.ServicePort{{Name: "http", Port: 80}}}})
	var eps []api.Endpoint
	for i := range 60 {
		eps = append(eps, ep(fmt.Sprintf("10.244.7.%d", i+1), "", true))
	}
	f.slice("default", "many", []api.EndpointSlicePort{port("http", 80, api.ProtocolTCP)}, eps...)
	f.serve()
	for _, name := range []string{"many.default.svc.cluster.local.", bigName} {
		for _, tc := range []struct {
			tcp, edns bool
			truncated bool
		}{{false, false, true}, {false, true, false}, {true, false, false}} {
			resp := f.query(name, dns.TypeA, tc.tcp, tc.edns)
			if resp.Truncated != tc.truncated {
				t.Errorf("%s over tcp=%v edns=%v: truncated %v, want %v", name, tc.tcp, tc.edns, resp.Truncated, tc.truncated)
			}
			if n := len(resp.Answer); tc.truncated && n >= 60 || !tc.truncated && n != 60 {
				t.Errorf("%s over tcp=%v edns=%v: %d answers", name, tc.tcp, tc.edns, n)
			}
			resp.Compress = true
			if b, err := resp.Pack(); err == nil && !tc.tcp && !tc.edns && len(b) > dns.MinMsgSize {
				t.Errorf("%s over UDP: %d bytes, more than %d", name, len(b), dns.MinMsgSize)
			}
		}
	}
}

// TestClusterDNSFollowsChanges: a new Service resolves as soon as the
// watch delivers it, and an ExternalName Service turned into a ClusterIP
// one answers its address (the ExternalName conformance spec's last step).
func TestClusterDNSFollowsChanges(t *testing.T) {
	f := startServer(t)
	f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "ext"}, Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "foo.example.com"}})
	f.serve()
	eventually := func(name string, qtype uint16, want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := records(f.query(name, qtype, false, true).Answer, name)
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s: %q, want %q", name, dns.TypeToString[qtype], got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	eventually("ext.default.svc.cluster.local.", dns.TypeCNAME, "CNAME foo.example.com.")
	late := f.service(&api.Service{ObjectMeta: api.ObjectMeta{Name: "late"}, Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 1}}}})
	eventually("late.default.svc.cluster.local.", dns.TypeA, "A "+late.Spec.ClusterIP)

	svcs := client.Resource[api.Service](f.c).Namespace("default")
	cur, err := svcs.Get(f.ctx, "ext")
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.ExternalName = "bar.example.com"
	if cur, err = svcs.Update(f.ctx, cur); err != nil {
		t.Fatal(err)
	}
	eventually("ext.default.svc.cluster.local.", dns.TypeCNAME, "CNAME bar.example.com.")
	cur.Spec.Type, cur.Spec.ExternalName = api.ServiceTypeClusterIP, ""
	cur.Spec.Ports = []api.ServicePort{{Name: "http", Port: 80, Protocol: api.ProtocolTCP}}
	if cur, err = svcs.Update(f.ctx, cur); err != nil {
		t.Fatal(err)
	}
	if cur.Spec.ClusterIP == "" {
		t.Fatal("the Service turned ClusterIP has no clusterIP")
	}
	eventually("ext.default.svc.cluster.local.", dns.TypeA, "A "+cur.Spec.ClusterIP)
}

func TestReverseAddress(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"4.3.2.10.in-addr.arpa.": "10.2.3.4",
		"4.3.2.10.IN-ADDR.ARPA.": "10.2.3.4",
		"3.2.10.in-addr.arpa.":   "",
		"a.3.2.10.in-addr.arpa.": "",
		"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.": "fd00::1",
		"1.0.0.ip6.arpa.":            "",
		"example.org.":               "",
		"4.3.2.10.in-addr.arpa.org.": "",
	} {
		if got := reverseAddress(name); got != want {
			t.Errorf("reverseAddress(%q) = %q, want %q", name, got, want)
		}
	}
}
