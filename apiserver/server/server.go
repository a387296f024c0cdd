package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/internal/version"
)

// DefaultMaxRequestBytes is Kubernetes' limit on a request body (3 MiB).
const DefaultMaxRequestBytes = 3 << 20

// HealthCheck is one named readiness check (etcd, watch caches, ...).
type HealthCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// Config assembles a Server.
type Config struct {
	// Stores are the served resources.
	Stores []*registry.Store
	// Custom serves the resources of CustomResourceDefinitions (nil: none).
	Custom CustomResources
	// ReadyChecks gate /readyz; /livez and /healthz run LiveChecks.
	ReadyChecks []HealthCheck
	LiveChecks  []HealthCheck
	// MaxRequestBytes bounds request bodies (default 3 MiB).
	MaxRequestBytes int64
	// MinRequestTimeout is the base of a watch's default timeout, which is
	// randomised in [1x, 2x) like kube-apiserver's (default 30 minutes).
	MinRequestTimeout time.Duration
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight limit the
	// read-only and the other requests served at once (0: no limit); see
	// withMaxInFlight.
	MaxRequestsInFlight         int
	MaxMutatingRequestsInFlight int
	// RequestTimeout is the deadline of a request that is not long-running
	// (default DefaultRequestTimeout); see withRequestDeadline.
	RequestTimeout time.Duration
	// Authorizer decides every request for an API route (discovery,
	// resources, OpenAPI); nil refuses them all.
	Authorizer authz.Authorizer
	// Reviewer answers the review kinds of authorization.k8s.io and
	// authentication.k8s.io (nil: they are not served).
	Reviewer Reviewer
	// ComponentStatuses answers componentstatuses (nil: not served).
	ComponentStatuses ComponentStatuses
	// Audit records one event per request (nil: no audit log).
	Audit *audit.Backend
	// OpenAPIV2 and OpenAPIV3 serve /openapi/v2 and /openapi/v3[/...] when set.
	OpenAPIV2 http.Handler
	OpenAPIV3 http.Handler
	// ExternalAddress is advertised in /api's serverAddressByClientCIDRs.
	ExternalAddress string
	// Tokens issues service-account tokens (serviceaccounts/NAME/token);
	// nil: the subresource answers 404.
	Tokens TokenCreator
	// OIDC serves the service-account issuer's discovery documents
	// (/.well-known/openid-configuration, /openid/v1/jwks) when set.
	OIDC OIDCDiscovery
	// Kubelet says how pods/log, exec, attach and portforward reach kubelets.
	Kubelet KubeletConfig
	// Aggregator serves the group/versions of remote APIServices (nil:
	// none); see apiserver/aggregator.
	Aggregator Aggregator
	Metrics    *prometheus.Registry
	Logger     *slog.Logger
	// Profiling serves net/http/pprof at /debug/pprof/ (kube-apiserver's
	// --profiling), behind authorization like /metrics.
	Profiling bool
}

// OIDCDiscovery serves the two OIDC discovery documents.
type OIDCDiscovery interface {
	ServeConfig(w http.ResponseWriter, r *http.Request)
	ServeJWKS(w http.ResponseWriter, r *http.Request)
}

// Server is the apiserver's HTTP layer: its routes, served through
// HandlerChain.
type Server struct {
	cfg Config
	// stores are the built-in resources by "group/resource" (their
	// preferred version) and "group/version/resource" (other versions).
	stores map[string]*registry.Store
	router chi.Router
	// api holds apiRoutes alone, to tell which requests need authorization.
	api     *chi.Mux
	log     *slog.Logger
	metrics *metrics
	proxy   *kubeletProxy
	// readOnly and mutating are the in-flight limits, one pair for every
	// listener's chain (see withMaxInFlight).
	readOnly, mutating *inflightLimit
}

// New builds the handler.
func New(cfg Config) *Server {
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MinRequestTimeout == 0 {
		cfg.MinRequestTimeout = 30 * time.Minute
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	if cfg.Authorizer == nil {
		cfg.Authorizer = authz.AlwaysDeny
	}
	s := &Server{cfg: cfg, stores: map[string]*registry.Store{}, log: cfg.Logger}
	for _, st := range cfg.Stores {
		if _, ok := s.stores[st.Info.Group+"/"+st.Info.Resource]; ok {
			// Another version of a resource served already (its
			// preferred one comes first).
			s.stores[st.Info.GroupVersion()+"/"+st.Info.Resource] = st
			continue
		}
		s.stores[st.Info.Group+"/"+st.Info.Resource] = st
	}
	s.metrics = newMetrics(cfg.Metrics)
	s.proxy = &kubeletProxy{cfg: cfg.Kubelet}
	s.readOnly = newInflightLimit(cfg.MaxRequestsInFlight, s.metrics.readOnly)
	s.mutating = newInflightLimit(cfg.MaxMutatingRequestsInFlight, s.metrics.mutating)
	s.router = s.routes()
	s.api = chi.NewRouter()
	s.apiRoutes(s.api)
	return s
}

// routes serves /healthz, /livez, /readyz and /version to any
// authenticated user, and apiRoutes to those the authorizer allows (see
// HandlerChain).
func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.NotFound(notFound)
	r.MethodNotAllowed(methodNotAllowed)

	s.healthRoutes(r, "/healthz", s.cfg.LiveChecks)
	s.healthRoutes(r, "/livez", s.cfg.LiveChecks)
	s.healthRoutes(r, "/readyz", s.readyChecks())
	r.Get("/version", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, r, http.StatusOK, version.Get()) })

	s.apiRoutes(r)
	return r
}

// apiRoutes are the routes behind authorization: /metrics and the single
// health checks (/livez/NAME and the like; get on the path, which kube's
// system:monitoring role grants), OpenAPI, discovery and the resources.
func (s *Server) apiRoutes(r chi.Router) {
	r.Handle("/metrics", promhttp.HandlerFor(s.cfg.Metrics, promhttp.HandlerOpts{}))
	s.healthCheckRoutes(r, "/healthz", s.cfg.LiveChecks)
	s.healthCheckRoutes(r, "/livez", s.cfg.LiveChecks)
	s.healthCheckRoutes(r, "/readyz", s.readyChecks())
	if s.cfg.Profiling {
		// As kube's routes.Profiling: the index (and every named profile
		// under it) and three handlers of their own.
		r.Get("/debug/pprof", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/debug/pprof/", http.StatusFound)
		})
		r.HandleFunc("/debug/pprof/*", pprof.Index)
		r.HandleFunc("/debug/pprof/profile", pprof.Profile)
		r.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		r.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	if s.cfg.OpenAPIV2 != nil {
		r.Handle("/openapi/v2", s.cfg.OpenAPIV2)
	}
	if s.cfg.OpenAPIV3 != nil {
		r.Handle("/openapi/v3", s.cfg.OpenAPIV3)
		r.Handle("/openapi/v3/*", s.cfg.OpenAPIV3)
	}
	if s.cfg.OIDC != nil {
		r.Get("/.well-known/openid-configuration", s.cfg.OIDC.ServeConfig)
		r.Get("/openid/v1/jwks", s.cfg.OIDC.ServeJWKS)
	}
	// kube serves the discovery roots with a trailing slash too (the
	// conformance specs ask for /apis/), /apis/ in the legacy form only.
	r.Get("/api", s.serveAPIVersions)
	r.Get("/api/", s.serveAPIVersions)
	r.Get("/apis", s.serveAPIGroupList)
	r.Get("/apis/", s.serveLegacyAPIGroupList)
	r.HandleFunc("/api/*", s.serveAPI)
	r.HandleFunc("/apis/*", s.serveAPI)
}

func (s *Server) health(checks []HealthCheck) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		var b strings.Builder
		failed := false
		exclude := map[string]bool{}
		for _, e := range r.URL.Query()["exclude"] {
			exclude[e] = true
		}
		b.WriteString("[+]ping ok\n")
		for _, c := range checks {
			if exclude[c.Name] {
				fmt.Fprintf(&b, "[+]%s excluded: ok\n", c.Name)
				continue
			}
			if err := c.Check(ctx); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.Name)
				s.log.Warn("health check failed", "check", c.Name, "path", r.URL.Path, "err", err)
				continue
			}
			fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(&b, "%s check failed\n", strings.TrimPrefix(r.URL.Path, "/"))
			_, _ = w.Write([]byte(b.String()))
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprintf(&b, "%s check passed\n", strings.TrimPrefix(r.URL.Path, "/"))
			_, _ = w.Write([]byte(b.String()))
			return
		}
		_, _ = w.Write([]byte("ok"))
	}
}

// store finds the store a request addresses, or nil.
func (s *Server) store(info *request.Info) *registry.Store {
	st := s.stores[info.APIGroup+"/"+info.Resource]
	if st != nil && st.Info.Version != info.APIVersion && info.APIGroup != "" {
		if other, ok := s.stores[info.APIGroup+"/"+info.APIVersion+"/"+info.Resource]; ok {
			st = other
		}
	}
	if (st == nil || st.Info.Version != info.APIVersion) && s.cfg.Custom != nil {
		if cr, ok := s.cfg.Custom.Lookup(info.APIGroup, info.APIVersion, info.Resource); ok {
			st = cr.Store
		}
	}
	if st == nil || st.Info.Version != info.APIVersion {
		return nil
	}
	if info.APIPrefix == "api" && st.Info.Group != "" {
		return nil
	}
	return st
}

func parseBool(v string) bool {
	b, _ := strconv.ParseBool(v)
	return b
}
