package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check is one named health check; a nil error means healthy.
type Check struct {
	Name string
	// Ready marks a check that only /readyz runs (for example "has the
	// caches synced"); other checks run for /healthz, /livez and /readyz.
	Ready bool
	Func  func() error
}

// Server serves a daemon's health and metrics endpoints.
type Server struct {
	// Addr is the listen address, "127.0.0.1:10259". Empty disables serving.
	Addr string
	// Registry receives the daemon's metrics; NewServer adds the Go and
	// process collectors.
	Registry *prometheus.Registry
	Logger   *slog.Logger

	mu     sync.Mutex
	checks []Check
	mux    *http.ServeMux
}

// NewServer returns a server for addr with a fresh registry holding the Go
// runtime and process collectors, serving the health checks and /metrics.
func NewServer(addr string, log *slog.Logger) *Server {
	s := NewHealthServer(addr, log)
	s.mux.Handle("/metrics", s.MetricsHandler())
	return s
}

// NewHealthServer is NewServer without the /metrics route: the kubelet's
// healthz port, which in Kubernetes answers the health checks alone (its
// metrics are on the authenticated kubelet port, see MetricsHandler).
func NewHealthServer(addr string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{Addr: addr, Registry: reg, Logger: log, mux: http.NewServeMux()}
	s.mux.HandleFunc("/healthz", s.health(false))
	s.mux.HandleFunc("/livez", s.health(false))
	s.mux.HandleFunc("/readyz", s.health(true))
	return s
}

// MetricsHandler serves the registry in the Prometheus text format.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{})
}

// AddCheck registers a health check.
func (s *Server) AddCheck(c Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks = append(s.checks, c)
}

// Handle adds an extra route (for example a debug endpoint).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Handler is the server's mux, for tests that drive it without a listener.
func (s *Server) Handler() http.Handler { return s.mux }

// health answers like the Kubernetes components: "ok" with 200, or 500 with
// one "[-]name failed: reason" line per failed check. "?verbose" lists every check.
func (s *Server) health(ready bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		checks := append([]Check(nil), s.checks...)
		s.mu.Unlock()
		sort.SliceStable(checks, func(i, j int) bool { return checks[i].Name < checks[j].Name })
		var b strings.Builder
		failed := false
		for _, c := range checks {
			if c.Ready && !ready {
				continue
			}
			if err := c.Func(); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: %v\n", c.Name, err)
			} else {
				fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%shealthz check failed\n", b.String())
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprintf(w, "%shealthz check passed\n", b.String())
			return
		}
		fmt.Fprint(w, "ok")
	}
}

// Serve listens on Addr (or serves the socket inherited for it, see Listen)
// until ctx ends, then shuts down within five seconds. It returns nil after
// a clean shutdown.
func (s *Server) Serve(ctx context.Context) error {
	if s.Addr == "" {
		<-ctx.Done()
		return nil
	}
	ln, err := Listen(s.Addr)
	if err != nil {
		return fmt.Errorf("health and metrics server: %w", err)
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener is Serve on an existing listener (tests pass 127.0.0.1:0).
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	srv := NewHTTPServer(s.mux)
	s.Logger.Info("serving health and metrics", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
