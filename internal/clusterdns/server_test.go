package clusterdns

import (
	"context"
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

// upstream is a fake resolver on loopback that knows one name.
func upstream(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if r.Question[0].Name == "example.org." {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 7)}}
		} else {
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

func TestClusterDNS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	svcs := client.Resource[api.Service](c).Namespace("default")
	web, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.ServiceSpec{
		Selector: map[string]string{"app": "web"},
		Ports:    []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromString("http")}, {Name: "dns", Port: 53, Protocol: api.ProtocolUDP}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "db"}, Spec: api.ServiceSpec{
		ClusterIP: api.ClusterIPNone, Selector: map[string]string{"app": "db"},
		Ports: []api.ServicePort{{Name: "pg", Port: 5432}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "ext"}, Spec: api.ServiceSpec{
		Type: api.ServiceTypeExternalName, ExternalName: "example.org"}}); err != nil {
		t.Fatal(err)
	}
	ready := func(ip string, host string, ok bool) api.Endpoint {
		ep := api.Endpoint{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: ptr(ok)}}
		if host != "" {
			ep.Hostname = ptr(host)
		}
		return ep
	}
	if _, err := client.Resource[api.EndpointSlice](c).Namespace("default").Create(ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: "db-abc", Labels: map[string]string{api.LabelServiceName: "db"}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointSlicePort{{Name: ptr("pg"), Port: ptr(int32(5432)), Protocol: ptr(api.ProtocolTCP)}},
		Endpoints:   []api.Endpoint{ready("10.244.1.5", "db-0", true), ready("10.244.2.6", "", true), ready("10.244.3.7", "", false)},
	}); err != nil {
		t.Fatal(err)
	}

	srv, err := New(Config{Client: c, Upstreams: []string{upstream(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeOn(ctx, pc, ln)
	addr := pc.LocalAddr().String()

	query := func(name string, qtype uint16, tcp bool) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(name, qtype)
		cl := &dns.Client{Timeout: 3 * time.Second}
		if tcp {
			cl.Net = "tcp"
		}
		var resp *dns.Msg
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, _, err = cl.Exchange(m, addr)
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return resp
	}
	answers := func(m *dns.Msg) string {
		var out []string
		for _, rr := range m.Answer {
			f := strings.Fields(rr.String())
			out = append(out, strings.Join(append([]string{f[3]}, f[4:]...), " "))
		}
		sort.Strings(out)
		return strings.Join(out, "; ")
	}
	for _, tc := range []struct {
		name  string
		qtype uint16
		tcp   bool
		rcode int
		want  string
	}{
		{"web.default.svc.cluster.local.", dns.TypeA, false, dns.RcodeSuccess, "A " + web.Spec.ClusterIP},
		{"WEB.Default.svc.cluster.local.", dns.TypeA, true, dns.RcodeSuccess, "A " + web.Spec.ClusterIP},
		{"web.default.svc.cluster.local.", dns.TypeAAAA, false, dns.RcodeSuccess, ""},
		{"_http._tcp.web.default.svc.cluster.local.", dns.TypeSRV, false, dns.RcodeSuccess, "SRV 0 100 80 web.default.svc.cluster.local."},
		{"_dns._udp.web.default.svc.cluster.local.", dns.TypeSRV, false, dns.RcodeSuccess, "SRV 0 100 53 web.default.svc.cluster.local."},
		{"_nope._tcp.web.default.svc.cluster.local.", dns.TypeSRV, false, dns.RcodeNameError, ""},
		{"db.default.svc.cluster.local.", dns.TypeA, false, dns.RcodeSuccess, "A 10.244.1.5; A 10.244.2.6"},
		{"db-0.db.default.svc.cluster.local.", dns.TypeA, false, dns.RcodeSuccess, "A 10.244.1.5"},
		{"_pg._tcp.db.default.svc.cluster.local.", dns.TypeSRV, false, dns.RcodeSuccess,
			"SRV 0 100 5432 10-244-2-6.db.default.svc.cluster.local.; SRV 0 100 5432 db-0.db.default.svc.cluster.local."},
		{"ext.default.svc.cluster.local.", dns.TypeA, false, dns.RcodeSuccess, "CNAME example.org."},
		{"10-244-9-9.default.pod.cluster.local.", dns.TypeA, false, dns.RcodeSuccess, "A 10.244.9.9"},
		{"missing.default.svc.cluster.local.", dns.TypeA, false, dns.RcodeNameError, ""},
		{"web.other.svc.cluster.local.", dns.TypeA, false, dns.RcodeNameError, ""},
		{"example.org.", dns.TypeA, false, dns.RcodeSuccess, "A 192.0.2.7"},
		{"nowhere.example.", dns.TypeA, false, dns.RcodeNameError, ""},
	} {
		resp := query(tc.name, tc.qtype, tc.tcp)
		if resp.Rcode != tc.rcode || answers(resp) != tc.want {
			t.Errorf("%s %s: rcode %s answers %q, want %s %q", tc.name, dns.TypeToString[tc.qtype],
				dns.RcodeToString[resp.Rcode], answers(resp), dns.RcodeToString[tc.rcode], tc.want)
		}
	}
	// SRV answers carry the targets' addresses.
	if resp := query("_pg._tcp.db.default.svc.cluster.local.", dns.TypeSRV, false); len(resp.Extra) != 2 {
		t.Errorf("SRV additional section: %v", resp.Extra)
	}
	// A new Service is answered as soon as the watch delivers it.
	api2, err := svcs.Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "late"}, Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for answers(query("late.default.svc.cluster.local.", dns.TypeA, false)) != "A "+api2.Spec.ClusterIP {
		if time.Now().After(deadline) {
			t.Fatal("new service never resolved")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
