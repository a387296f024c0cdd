package ingress_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/ingress"
)

// BenchmarkIngressVsDirect is issue 29's throughput comparison: the same
// client (keep-alive, GOMAXPROCS goroutines) GETs a backend on this
// machine straight at its address ("direct", as a pod IP) and through the
// ingress controller by Host ("ingress"): its router, Go's reverse proxy
// and a second connection per request path. Each reports requests/s; read
// the two as a ratio from one run.
func BenchmarkIngressVsDirect(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := apiservertest.Start(b, apiservertest.WithTLS)
	c := s.AdminClient(b)
	ip := hostIP(b)
	be := newBackend(b, ip, "bench")
	must := func(_ any, err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	must(client.Resource[api.Service](c).Namespace("default").Create(ctx, &api.Service{ObjectMeta: api.ObjectMeta{Name: "svc"},
		Spec: api.ServiceSpec{Ports: []api.ServicePort{{Port: 80, Protocol: api.ProtocolTCP}}}}))
	must(client.Resource[api.EndpointSlice](c).Namespace("default").Create(ctx, &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: "svc-x1", Labels: map[string]string{api.LabelServiceName: "svc"}},
		AddressType: api.AddressTypeIPv4,
		Ports:       []api.EndpointSlicePort{{Name: ptr(""), Port: ptr(be.port), Protocol: ptr(api.ProtocolTCP)}},
		Endpoints:   []api.Endpoint{{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: ptr(true)}}},
	}))
	must(client.Resource[api.IngressClass](c).Create(ctx, &api.IngressClass{ObjectMeta: api.ObjectMeta{Name: "minik8s"},
		Spec: api.IngressClassSpec{Controller: ingress.DefaultControllerClass}}))
	must(client.Resource[api.Ingress](c).Namespace("default").Create(ctx, &api.Ingress{ObjectMeta: api.ObjectMeta{Name: "bench"},
		Spec: api.IngressSpec{IngressClassName: ptr("minik8s"), Rules: []api.IngressRule{rule("bench.example", prefix("/", "svc", port80))}}}))

	ctrl, err := ingress.New(ingress.Config{Client: c, Class: ingress.Class{Controller: ingress.DefaultControllerClass, Name: "minik8s"},
		Logger: apiservertest.Logger()})
	if err != nil {
		b.Fatal(err)
	}
	if err := ctrl.Start(ctx); err != nil {
		b.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	httpsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- ctrl.Serve(ctx, httpLn, httpsLn) }()
	defer func() {
		cancel()
		<-served
		ctrl.Wait()
	}()

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}
	get := func(url, host string) error {
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return &statusError{resp.StatusCode}
		}
		return nil
	}
	ingressURL := "http://" + httpLn.Addr().String() + "/"
	// The route is served once the controller has seen the Ingress.
	deadline := time.Now().Add(30 * time.Second)
	for get(ingressURL, "bench.example") != nil {
		if time.Now().After(deadline) {
			b.Fatal("the Ingress was not served within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, bc := range []struct{ name, url, host string }{
		{"direct", "http://" + net.JoinHostPort(ip, strconv.Itoa(int(be.port))) + "/", ""},
		{"ingress", ingressURL, "bench.example"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := get(bc.url, bc.host); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

type statusError struct{ code int }

func (e *statusError) Error() string { return http.StatusText(e.code) }
