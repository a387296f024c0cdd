package proxy

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
)

// TestHealthCheckNodePort: a Service with externalTrafficPolicy Local and a
// healthCheckNodePort is answered as kube-proxy answers it: 200 with the
// local endpoint count while the node has one, 503 when it has none, and
// the port closed when the Service no longer asks for it.
func TestHealthCheckNodePort(t *testing.T) {
	h := newHealthChecks(slog.Default())
	addrs := map[int32]string{}
	h.listen = func(port int32) (net.Listener, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			addrs[port] = l.Addr().String()
		}
		return l, err
	}
	defer h.close()
	sp := &servicePort{Namespace: "default", Name: "web", HealthCheckNodePort: 31000, ExternalLocal: true,
		Endpoints: []string{"10.244.1.2:80", "10.244.2.2:80"}, LocalEndpoints: []string{"10.244.1.2:80"}}
	get := func() (int, string, http.Header) {
		t.Helper()
		resp, err := http.Get("http://" + addrs[31000] + "/")
		if err != nil {
			return 0, err.Error(), nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	h.sync([]*servicePort{sp})
	code, body, hdr := get()
	want := "{\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"web\"\n\t},\n\t\"localEndpoints\": 1,\n\t\"serviceProxyHealthy\": true\n}"
	if code != 200 || body != want || hdr.Get("X-Load-Balancing-Endpoint-Weight") != "1" || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("one local endpoint: %d %q %v", code, body, hdr)
	}
	sp.LocalEndpoints = nil
	h.sync([]*servicePort{sp})
	if code, body, _ := get(); code != 503 || body != "{\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"web\"\n\t},\n\t\"localEndpoints\": 0,\n\t\"serviceProxyHealthy\": true\n}" {
		t.Errorf("no local endpoint: %d %q", code, body)
	}
	h.sync(nil)
	if code, body, _ := get(); code != 0 {
		t.Errorf("after the Service went: %d %q, want the port closed", code, body)
	}
}
