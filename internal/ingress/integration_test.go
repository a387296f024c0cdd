package ingress_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/ingress"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// backend is an HTTP server on this machine answering "NAME host=HOST xff=..."; a
// request to /slow waits until release is closed.
type backend struct {
	name    string
	srv     *httptest.Server
	port    int32
	release chan struct{}
	started chan struct{}
}

func newBackend(t testing.TB, ip, name string) *backend {
	b := &backend{name: name, release: make(chan struct{}), started: make(chan struct{}, 10)}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			b.started <- struct{}{}
			<-b.release
		}
		fmt.Fprintf(w, "%s host=%s xff=%s path=%s", b.name, r.Host, r.Header.Get("X-Forwarded-For"), r.URL.Path)
	}))
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	b.srv.Listener.Close()
	b.srv.Listener = l
	b.srv.Start()
	t.Cleanup(b.srv.Close)
	_, p, _ := net.SplitHostPort(b.srv.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	b.port = int32(n)
	return b
}

// hostIP is a non-loopback IPv4 address of this machine: EndpointSlice
// validation refuses loopback addresses, so the backends listen on it.
func hostIP(t testing.TB) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address to put in EndpointSlices")
	return ""
}

func ptr[T any](v T) *T { return &v }

func prefix(path, svc string, port api.ServiceBackendPort) api.HTTPIngressPath {
	return api.HTTPIngressPath{Path: path, PathType: ptr(ingress.PathTypePrefix),
		Backend: api.IngressBackend{Service: &api.IngressServiceBackend{Name: svc, Port: port}}}
}

func rule(host string, paths ...api.HTTPIngressPath) api.IngressRule {
	return api.IngressRule{Host: host, IngressRuleValue: api.IngressRuleValue{HTTP: &api.HTTPIngressRuleValue{Paths: paths}}}
}

var port80 = api.ServiceBackendPort{Number: 80}

// TestIngressController runs the controller against a real apiserver with
// backends on this machine behind Services and hand-made EndpointSlices
// (the controller itself on loopback ports), and
// checks it with real HTTP and HTTPS requests.
func TestIngressController(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ns := "default"

	ip := hostIP(t)
	backends := map[string]*backend{}
	for _, name := range []string{"a", "b", "dflt", "foreign", "later"} {
		backends[name] = newBackend(t, ip, name)
	}
	// Services: svc-a (80, unnamed), svc-b (8080 "web"), svc-dflt,
	// svc-foreign, svc-later (no ready endpoint at first).
	mkService := func(name, portName string, port int32, be *backend, ready bool) {
		must(client.Resource[api.Service](c).Namespace(ns).Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: name},
			Spec: api.ServiceSpec{Ports: []api.ServicePort{{Name: portName, Port: port, Protocol: api.ProtocolTCP}}}}))
		must(client.Resource[api.EndpointSlice](c).Namespace(ns).Create(ctx, &api.EndpointSlice{
			ObjectMeta:  api.ObjectMeta{Name: name + "-x1", Labels: map[string]string{api.LabelServiceName: name}},
			AddressType: api.AddressTypeIPv4,
			Ports:       []api.EndpointSlicePort{{Name: ptr(portName), Port: ptr(be.port), Protocol: ptr(api.ProtocolTCP)}},
			Endpoints:   []api.Endpoint{{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: ptr(ready)}}},
		}))
	}
	mkService("svc-a", "", 80, backends["a"], true)
	mkService("svc-b", "web", 8080, backends["b"], true)
	mkService("svc-dflt", "", 80, backends["dflt"], true)
	mkService("svc-foreign", "", 80, backends["foreign"], true)
	mkService("svc-later", "", 80, backends["later"], false)

	classes := client.Resource[api.IngressClass](c)
	must(classes.Create(ctx, &api.IngressClass{ObjectMeta: api.ObjectMeta{Name: "minik8s",
		Annotations: map[string]string{ingress.AnnotationIsDefaultIngressClass: "true"}},
		Spec: api.IngressClassSpec{Controller: ingress.DefaultControllerClass}}))
	must(classes.Create(ctx, &api.IngressClass{ObjectMeta: api.ObjectMeta{Name: "other"}, Spec: api.IngressClassSpec{Controller: "example.com/other"}}))

	// The TLS Secret: a certificate for secure.example from a CA of ours.
	ca, err := pki.NewCA("ingress-test-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	crtPEM, keyPEM, err := ca.IssueServing("secure.example", []string{"secure.example"}, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	must(client.Resource[api.Secret](c).Namespace(ns).Create(ctx, &api.Secret{ObjectMeta: api.ObjectMeta{Name: "secure-tls"},
		Type: api.SecretTypeTLS, Data: map[string][]byte{api.TLSCertKey: crtPEM, api.TLSPrivateKeyKey: keyPEM}}))

	ings := client.Resource[api.Ingress](c).Namespace(ns)
	exact := prefix("/exact", "svc-b", api.ServiceBackendPort{Name: "web"})
	exact.PathType = ptr(ingress.PathTypeExact)
	must(ings.Create(ctx, &api.Ingress{ObjectMeta: api.ObjectMeta{Name: "hosts"}, Spec: api.IngressSpec{IngressClassName: ptr("minik8s"),
		Rules: []api.IngressRule{
			rule("a.example", prefix("/", "svc-a", port80)),
			rule("b.example", exact, prefix("/api", "svc-a", port80)),
			rule("later.example", prefix("/", "svc-later", port80)),
			rule("gone.example", prefix("/", "svc-missing", port80)),
		}}}))
	dflt := api.IngressBackend{Service: &api.IngressServiceBackend{Name: "svc-dflt", Port: port80}}
	// No class: ours, as the default IngressClass.
	must(ings.Create(ctx, &api.Ingress{ObjectMeta: api.ObjectMeta{Name: "fallback"}, Spec: api.IngressSpec{DefaultBackend: &dflt}}))
	must(ings.Create(ctx, &api.Ingress{ObjectMeta: api.ObjectMeta{Name: "secure"}, Spec: api.IngressSpec{IngressClassName: ptr("minik8s"),
		TLS:   []api.IngressTLS{{Hosts: []string{"secure.example"}, SecretName: "secure-tls"}},
		Rules: []api.IngressRule{rule("secure.example", prefix("/", "svc-b", api.ServiceBackendPort{Name: "web"}))}}}))
	must(ings.Create(ctx, &api.Ingress{ObjectMeta: api.ObjectMeta{Name: "foreign"}, Spec: api.IngressSpec{IngressClassName: ptr("other"),
		Rules: []api.IngressRule{rule("foreign.example", prefix("/", "svc-foreign", port80))}}}))

	reg := prometheus.NewRegistry()
	ctrl, err := ingress.New(ingress.Config{Client: c, Class: ingress.Class{Controller: ingress.DefaultControllerClass, Name: "minik8s"},
		PublishAddresses: []string{"192.0.2.7", "ingress.example.net"}, Logger: apiservertest.Logger(), Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	if err := ctrl.Start(cctx); err != nil {
		t.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- ctrl.Serve(cctx, httpLn, httpsLn) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		ctrl.Wait()
	}()

	httpBase := "http://" + httpLn.Addr().String()
	plain := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: nil}}
	get := func(host, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", httpBase+path, nil)
		req.Host = host
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatalf("GET %s%s: %v", host, path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	expect := func(host, path string, code int, bodyPrefix string) {
		t.Helper()
		gotCode, body := get(host, path)
		if gotCode != code || !strings.HasPrefix(body, bodyPrefix) {
			t.Errorf("%s%s: %d %q, want %d %q...", host, path, gotCode, body, code, bodyPrefix)
		}
	}

	// Routing.
	expect("a.example", "/anything", 200, "a host=a.example xff=127.0.0.1 path=/anything")
	expect("a.example:8080", "/", 200, "a host=a.example:8080")
	expect("b.example", "/exact", 200, "b ")
	expect("b.example", "/exact/more", 404, "")
	expect("b.example", "/api/v1", 200, "a ")
	expect("b.example", "/apis", 404, "")
	expect("later.example", "/", 503, "")
	expect("gone.example", "/", 503, "")
	expect("unknown.example", "/x", 200, "dflt ")
	// Another class's Ingress is left alone: its host falls to our default.
	expect("foreign.example", "/", 200, "dflt ")

	// TLS: SNI gives the Secret's certificate, verified against our CA.
	httpsAddr := httpsLn.Addr().String()
	secure := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{ServerName: "secure.example", RootCAs: ca.Pool()}}}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+httpsAddr+"/hello", nil)
	req.Host = "secure.example"
	resp, err := secure.Do(req)
	if err != nil {
		t.Fatalf("HTTPS to secure.example: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "b host=secure.example") {
		t.Errorf("HTTPS secure.example: %d %q", resp.StatusCode, body)
	}
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "secure.example" {
		t.Errorf("HTTPS secure.example: certificate of %q", cn)
	}
	// An unknown name gets the self-signed fallback, and is routed by Host.
	conn, err := tls.Dial("tcp", httpsAddr, &tls.Config{ServerName: "nobody.example", InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != ingress.FallbackCommonName {
		t.Errorf("unknown server name: certificate of %q, want the fallback", cn)
	}
	conn.Close()
	insecure := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{ServerName: "a.example", InsecureSkipVerify: true}}}
	req, _ = http.NewRequestWithContext(ctx, "GET", "https://"+httpsAddr+"/", nil)
	req.Host = "a.example"
	if resp, err = insecure.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "a ") {
		t.Errorf("HTTPS a.example: %q", body)
	}
	if _, err := resp.TLS.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "a.example"}); err == nil {
		t.Error("a.example got a certificate of the CA although no Ingress lists it")
	}

	// status.loadBalancer of our Ingresses, and not of the other class's.
	want := "192.0.2.7,ingress.example.net"
	lb := func(name string) string {
		ing, err := ings.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ing.Status.LoadBalancer.Ingress {
			out = append(out, e.IP+e.Hostname)
		}
		return strings.Join(out, ",")
	}
	for _, name := range []string{"hosts", "fallback", "secure"} {
		eventually("status of "+name, func() bool { return lb(name) == want })
	}
	if got := lb("foreign"); got != "" {
		t.Errorf("Ingress of another class got status %q", got)
	}

	// Endpoints followed: svc-later gets a ready endpoint.
	sl, err := client.Resource[api.EndpointSlice](c).Namespace(ns).Get(ctx, "svc-later-x1")
	if err != nil {
		t.Fatal(err)
	}
	sl.Endpoints[0].Conditions.Ready = ptr(true)
	must(client.Resource[api.EndpointSlice](c).Namespace(ns).Update(ctx, sl))
	eventually("later.example served", func() bool { code, _ := get("later.example", "/"); return code == 200 })

	// An update re-routes without a restart while a slow request in flight
	// completes on the old route.
	var wg sync.WaitGroup
	var slowCode int
	var slowBody string
	wg.Add(1)
	go func() {
		defer wg.Done()
		req, _ := http.NewRequestWithContext(ctx, "GET", httpBase+"/slow", nil)
		req.Host = "a.example"
		resp, err := plain.Do(req)
		if err != nil {
			slowBody = err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		slowCode, slowBody = resp.StatusCode, string(b)
	}()
	select {
	case <-backends["a"].started:
	case <-ctx.Done():
		t.Fatal("the slow request never reached backend a")
	}
	hosts, err := ings.Get(ctx, "hosts")
	if err != nil {
		t.Fatal(err)
	}
	hosts.Spec.Rules[0] = rule("a.example", prefix("/", "svc-foreign", port80))
	must(ings.Update(ctx, hosts))
	eventually("a.example re-routed", func() bool { _, body := get("a.example", "/"); return strings.HasPrefix(body, "foreign ") })
	close(backends["a"].release)
	wg.Wait()
	if slowCode != 200 || !strings.HasPrefix(slowBody, "a host=a.example") {
		t.Errorf("request in flight during the update: %d %q, want 200 from a", slowCode, slowBody)
	}

	// The class changes hands: the Ingress is dropped.
	foreign, err := ings.Get(ctx, "foreign")
	if err != nil {
		t.Fatal(err)
	}
	foreign.Spec.IngressClassName = ptr("minik8s")
	must(ings.Update(ctx, foreign))
	eventually("foreign.example adopted", func() bool { _, body := get("foreign.example", "/"); return strings.HasPrefix(body, "foreign ") })
	eventually("status of the adopted Ingress", func() bool { return lb("foreign") == want })

	// The request counter by Ingress and status.
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range []string{
		`ingress_controller_requests_total{ingress="hosts",namespace="default",service="svc-a",status="200"}`,
		`ingress_controller_requests_total{ingress="hosts",namespace="default",service="svc-later",status="503"}`,
		`ingress_controller_requests_total{ingress="",namespace="",service="",status="404"}`,
	} {
		if !strings.Contains(rec.Body.String(), line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}
