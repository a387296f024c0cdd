package aggregatortest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
)

// Backend is a registered test extension apiserver.
type Backend struct {
	// Server is the HTTPS server; CA signed its certificate.
	Server *httptest.Server
	CA     *pki.CA
	// Name is the APIService's name, version.group.
	Name string
	// IP and Port are the backend's address, the EndpointSlice's.
	IP   string
	Port int
}

// Options say what to register.
type Options struct {
	Group, Version string
	// Namespace and Service name the Service (default kube-system,
	// test-extension).
	Namespace, Service string
	// Handler answers every request that reaches the backend.
	Handler http.Handler
	// ClientCAs, when set, verify client certificates (the front-proxy CA).
	ClientCAs *x509.CertPool
}

// Start serves opts.Handler over HTTPS on a host address and registers it: a
// ClusterIP Service on port 443, an EndpointSlice with the backend's
// address, and an APIService with the backend CA as caBundle. It
// does not wait for availability (WaitAvailable does).
func Start(t testing.TB, ctx context.Context, c *client.Client, opts Options) *Backend {
	t.Helper()
	if opts.Namespace == "" {
		opts.Namespace = "kube-system"
	}
	if opts.Service == "" {
		opts.Service = "test-extension"
	}
	ca, err := pki.NewCA("test-extension-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueServing(opts.Service, []string{opts.Service + "." + opts.Namespace + ".svc"}, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	// Endpoints may not be loopback addresses: listen on the host's own.
	ip := hostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(opts.Handler)
	srv.Listener.Close()
	srv.Listener = l
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: opts.ClientCAs}
	if opts.ClientCAs != nil {
		srv.TLS.ClientAuth = tls.VerifyClientCertIfGiven
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)

	portName := "https"
	if _, err := client.Resource[api.Service](c).Namespace(opts.Namespace).Create(ctx, &api.Service{
		ObjectMeta: api.ObjectMeta{Name: opts.Service, Namespace: opts.Namespace},
		Spec:       api.ServiceSpec{Ports: []api.ServicePort{{Name: portName, Port: 443, TargetPort: api.FromInt(int32(port))}}},
	}); err != nil {
		t.Fatal(err)
	}
	p32, ready := int32(port), true
	if _, err := client.Resource[api.EndpointSlice](c).Namespace(opts.Namespace).Create(ctx, &api.EndpointSlice{
		ObjectMeta: api.ObjectMeta{Name: opts.Service + "-test", Namespace: opts.Namespace,
			Labels: map[string]string{api.LabelServiceName: opts.Service}},
		AddressType: api.AddressTypeIPv4,
		Endpoints:   []api.Endpoint{{Addresses: []string{ip}, Conditions: api.EndpointConditions{Ready: &ready}}},
		Ports:       []api.EndpointSlicePort{{Name: &portName, Port: &p32}},
	}); err != nil {
		t.Fatal(err)
	}
	name := opts.Version + "." + opts.Group
	if _, err := client.Resource[api.APIService](c).Create(ctx, &api.APIService{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.APIServiceSpec{Group: opts.Group, Version: opts.Version, CABundle: ca.CertPEM(),
			Service:              &api.APIServiceReference{Namespace: opts.Namespace, Name: opts.Service},
			GroupPriorityMinimum: 100, VersionPriority: 100},
	}); err != nil {
		t.Fatal(err)
	}
	return &Backend{Server: srv, CA: ca, Name: name, Port: port, IP: ip}
}

// hostIP is a global unicast IPv4 address of this host.
func hostIP(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatal("no global unicast IPv4 address on this host for a test endpoint")
	return ""
}

// WaitCondition waits until the APIService's Available condition has
// status and reason, and returns it.
func WaitCondition(t testing.TB, ctx context.Context, c *client.Client, name string, status api.ConditionStatus, reason string) api.APIServiceCondition {
	t.Helper()
	var last *api.APIService
	for {
		s, err := client.Resource[api.APIService](c).Get(ctx, name)
		if err == nil {
			last = s
			if cond := s.AvailableCondition(); cond != nil && cond.Status == status && cond.Reason == reason {
				return *cond
			}
		}
		select {
		case <-ctx.Done():
			b, _ := json.Marshal(last)
			t.Fatalf("APIService %s never became %s (%s): %s", name, status, reason, b)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
