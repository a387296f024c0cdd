package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// healthChecks serves the healthCheckNodePort of every Service with
// externalTrafficPolicy Local, as kube-proxy does: a load balancer asks
// each node and sends traffic only to those answering 200, the nodes with
// local endpoints.
type healthChecks struct {
	log *slog.Logger
	// listen opens a port's listener (tests listen on loopback).
	listen func(port int32) (net.Listener, error)

	mu      sync.Mutex
	servers map[int32]*hcServer
}

// hcServer is one port's server and what it answers.
type hcServer struct {
	srv             *http.Server
	namespace, name string
	local           int
}

func newHealthChecks(log *slog.Logger) *healthChecks {
	return &healthChecks{log: log, servers: map[int32]*hcServer{},
		listen: func(port int32) (net.Listener, error) {
			return net.Listen("tcp", ":"+strconv.Itoa(int(port)))
		}}
}

// sync opens the ports of sps' health checks not open yet, closes the
// ones no Service has any more and sets the local endpoint counts.
func (h *healthChecks) sync(sps []*servicePort) {
	want := map[int32]*servicePort{}
	local := map[int32]int{}
	for _, sp := range sps {
		if sp.HealthCheckNodePort == 0 || !sp.ExternalLocal {
			continue
		}
		if _, ok := want[sp.HealthCheckNodePort]; !ok {
			want[sp.HealthCheckNodePort] = sp
		}
		// The Service's local endpoints, whatever the port.
		local[sp.HealthCheckNodePort] = max(local[sp.HealthCheckNodePort], len(sp.LocalEndpoints))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for port, s := range h.servers {
		if w, ok := want[port]; !ok || w.Namespace != s.namespace || w.Name != s.name {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = s.srv.Shutdown(ctx)
			cancel()
			delete(h.servers, port)
		}
	}
	for port, sp := range want {
		if s, ok := h.servers[port]; ok {
			s.local = local[port]
			continue
		}
		l, err := h.listen(port)
		if err != nil {
			h.log.Error("opening a service health check port", "service", sp.Namespace+"/"+sp.Name, "port", port, "err", err)
			continue
		}
		s := &hcServer{namespace: sp.Namespace, name: sp.Name, local: local[port]}
		s.srv = &http.Server{Handler: h.handler(port), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 90 * time.Second}
		h.servers[port] = s
		go func() {
			if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				h.log.Error("service health check server", "port", port, "err", err)
			}
		}()
	}
}

// handler answers as kube-proxy's service health check: 200 with the
// count of local endpoints, 503 when there is none.
func (h *healthChecks) handler(port int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h.mu.Lock()
		s, ok := h.servers[port]
		var ns, name string
		var n int
		if ok {
			ns, name, n = s.namespace, s.name, s.local
		}
		h.mu.Unlock()
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(n))
		if n > 0 {
			w.WriteHeader(http.StatusOK)
		} else {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintf(w, "{\n\t\"service\": {\n\t\t\"namespace\": %q,\n\t\t\"name\": %q\n\t},\n\t\"localEndpoints\": %d,\n\t\"serviceProxyHealthy\": true\n}", ns, name, n)
	})
}

// close stops every server.
func (h *healthChecks) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for port, s := range h.servers {
		_ = s.srv.Close()
		delete(h.servers, port)
	}
}
