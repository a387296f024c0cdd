package ingress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/workqueue"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Controller.
type Config struct {
	Client *client.Client
	Class  Class
	// PublishAddresses become each owned Ingress' status.loadBalancer.ingress
	// (IPs as ip, names as hostname); none: the status is not written.
	PublishAddresses []string
	// FallbackCertificate answers server names without a certificate;
	// nil: a self-signed one made by New.
	FallbackCertificate *tls.Certificate
	// ShutdownGrace is how long Serve waits for requests in flight when
	// its context ends (default 10 s).
	ShutdownGrace time.Duration
	Logger        *slog.Logger
	// Metrics, if set, receives the controller's metrics.
	Metrics prometheus.Registerer
}

// Controller follows the cluster's Ingresses and proxies to their backends.
type Controller struct {
	cfg Config
	log *slog.Logger

	factory   *informer.Factory
	ingresses *informer.Informer[api.Ingress]
	classes   *informer.Informer[api.IngressClass]
	services  *informer.Informer[api.Service]
	slices    *informer.Informer[api.EndpointSlice]
	secrets   *informer.Informer[api.Secret]

	table   atomic.Pointer[Table]
	rebuild chan struct{}
	status  *workqueue.RateLimitingQueue[string]
	wg      sync.WaitGroup

	proxy *httputil.ReverseProxy

	certMu    sync.Mutex
	certCache map[string]cachedCert

	requests *prometheus.CounterVec
	builds   prometheus.Counter
	owned    prometheus.Gauge
}

type cachedCert struct {
	resourceVersion string
	crt             *tls.Certificate
	err             error
}

const byServiceIndex = "service"

type endpointKey struct{}

// New sets up the informers and the proxy; Start starts them.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil {
		return nil, errors.New("ingress: no client")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 10 * time.Second
	}
	if cfg.FallbackCertificate == nil {
		crt, err := SelfSignedCertificate()
		if err != nil {
			return nil, fmt.Errorf("fallback certificate: %w", err)
		}
		cfg.FallbackCertificate = crt
	}
	f := informer.NewFactory(cfg.Client, informer.FactoryOptions{Logger: cfg.Logger})
	c := &Controller{
		cfg:       cfg,
		log:       cfg.Logger,
		factory:   f,
		ingresses: informer.Shared[api.Ingress](f, "", client.ListOptions{}),
		classes:   informer.Shared[api.IngressClass](f, "", client.ListOptions{}),
		services:  informer.Shared[api.Service](f, "", client.ListOptions{}),
		slices:    informer.Shared[api.EndpointSlice](f, "", client.ListOptions{}),
		// Only TLS Secrets: the others are no business of an ingress.
		secrets:   informer.Shared[api.Secret](f, "", client.ListOptions{FieldSelector: "type=" + string(api.SecretTypeTLS)}),
		rebuild:   make(chan struct{}, 1),
		status:    workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[string]()),
		certCache: map[string]cachedCert{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ingress_controller_requests_total",
			Help: "HTTP(S) requests answered, by the namespace, Ingress and Service that took them (empty when none did) and status code.",
		}, []string{"namespace", "ingress", "service", "status"}),
		builds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ingress_controller_routing_table_builds_total", Help: "Routing tables built after changes of Ingresses, classes, Services, EndpointSlices or Secrets.",
		}),
		owned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ingress_controller_ingresses", Help: "Ingresses of the controller's class in the routing table.",
		}),
	}
	if err := c.slices.AddIndexers(cache.Indexers[api.EndpointSlice]{byServiceIndex: func(sl *api.EndpointSlice) []string {
		if n := sl.Labels[api.LabelServiceName]; n != "" {
			return []string{sl.Namespace + "/" + n}
		}
		return nil
	}}); err != nil {
		return nil, err
	}
	if cfg.Metrics != nil {
		for _, m := range []prometheus.Collector{c.requests, c.builds, c.owned} {
			if err := cfg.Metrics.Register(m); err != nil {
				return nil, err
			}
		}
	}
	c.table.Store(Build(nil, c, c.log))
	c.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: "http", Host: pr.In.Context().Value(endpointKey{}).(string)})
			// The backend sees the Host the client asked for, as with
			// ingress-nginx, and X-Forwarded-For/-Host/-Proto.
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport:    newTransport(),
		ErrorLog:     slog.NewLogLogger(c.log.Handler(), slog.LevelWarn),
		ErrorHandler: c.proxyError,
	}

	changed := func() {
		select {
		case c.rebuild <- struct{}{}:
		default:
		}
	}
	addHandlers(c.services, changed)
	addHandlers(c.slices, changed)
	addHandlers(c.secrets, changed)
	addHandlers(c.classes, func() { changed(); c.queueAllIngresses() })
	c.ingresses.AddEventHandler(informer.Handler[api.Ingress]{
		OnAdd: func(ing *api.Ingress, _ bool) {
			changed()
			c.status.Add(cache.MetaNamespaceKey(ing.Namespace, ing.Name))
		},
		OnUpdate: func(_, ing *api.Ingress) { changed(); c.status.Add(cache.MetaNamespaceKey(ing.Namespace, ing.Name)) },
		OnDelete: func(*api.Ingress, bool) { changed() },
	})
	return c, nil
}

func addHandlers[T any](inf *informer.Informer[T], changed func()) {
	inf.AddEventHandler(informer.Handler[T]{
		OnAdd:    func(*T, bool) { changed() },
		OnUpdate: func(_, _ *T) { changed() },
		OnDelete: func(*T, bool) { changed() },
	})
}

// newTransport is http.DefaultTransport's settings without a proxy from
// the environment: backends are reached directly.
func newTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Ready reports whether the caches have synced.
func (c *Controller) Ready() error {
	for _, s := range []informer.Syncer{c.ingresses, c.classes, c.services, c.slices, c.secrets} {
		if !s.HasSynced() {
			return errors.New("caches not synced")
		}
	}
	return nil
}

// Start starts the informers, waits for them, builds the first table and
// starts the table and status loops; they stop when ctx ends (Wait waits
// for them).
func (c *Controller) Start(ctx context.Context) error {
	c.factory.Start(ctx)
	if !informer.WaitForCacheSync(ctx, c.ingresses, c.classes, c.services, c.slices, c.secrets) {
		return ctx.Err()
	}
	c.buildTable()
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.rebuild:
				c.buildTable()
			}
		}
	}()
	go func() {
		defer c.wg.Done()
		for c.processStatus(ctx) {
		}
	}()
	go func() {
		<-ctx.Done()
		c.status.ShutDown()
	}()
	return nil
}

// Wait waits for the loops Start started, after its context ended.
func (c *Controller) Wait() {
	c.wg.Wait()
	c.factory.Wait()
}

// Table returns the routing table in use.
func (c *Controller) Table() *Table { return c.table.Load() }

// ownedIngresses lists the Ingresses of the controller's class.
func (c *Controller) ownedIngresses() []*api.Ingress {
	classes := c.classes.Lister().List(nil)
	var out []*api.Ingress
	for _, ing := range c.ingresses.Lister().List(nil) {
		if c.cfg.Class.Owns(ing, classes) {
			out = append(out, ing)
		}
	}
	return out
}

func (c *Controller) buildTable() {
	start := time.Now()
	owned := c.ownedIngresses()
	t := Build(owned, c, c.log)
	c.table.Store(t)
	c.builds.Inc()
	c.owned.Set(float64(len(owned)))
	c.log.Debug("routing table built", "ingresses", len(owned), "duration", time.Since(start))
}

// Service implements Sources from the informer cache.
func (c *Controller) Service(namespace, name string) *api.Service {
	svc, err := c.services.Lister().Namespace(namespace).Get(name)
	if err != nil {
		return nil
	}
	return svc
}

// EndpointSlices implements Sources from the informer cache.
func (c *Controller) EndpointSlices(namespace, service string) []*api.EndpointSlice {
	out, _ := c.slices.Store().ByIndex(byServiceIndex, namespace+"/"+service)
	return out
}

// Certificate implements Sources: the Secret's key pair, parsed once per
// resourceVersion.
func (c *Controller) Certificate(namespace, name string) (*tls.Certificate, error) {
	sec, err := c.secrets.Lister().Namespace(namespace).Get(name)
	if err != nil {
		return nil, fmt.Errorf("no %s Secret %s/%s", api.SecretTypeTLS, namespace, name)
	}
	key := namespace + "/" + name
	c.certMu.Lock()
	defer c.certMu.Unlock()
	if cc, ok := c.certCache[key]; ok && cc.resourceVersion == sec.ResourceVersion {
		return cc.crt, cc.err
	}
	crt, err := parseKeyPair(sec)
	c.certCache[key] = cachedCert{resourceVersion: sec.ResourceVersion, crt: crt, err: err}
	return crt, err
}

// TLSConfig serves the Ingresses' certificates by SNI.
func (c *Controller) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if crt := c.table.Load().Certificate(hello.ServerName); crt != nil {
				return crt, nil
			}
			return c.cfg.FallbackCertificate, nil
		},
	}
}

// ServeHTTP routes a request by the current table and proxies it.
func (c *Controller) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := c.table.Load().Match(r.Host, r.URL.Path)
	rec := &statusRecorder{ResponseWriter: w}
	var ns, ing, svc string
	if b != nil {
		ns, ing, svc = b.Namespace, b.Ingress, b.Service
	}
	defer func() {
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		c.requests.WithLabelValues(ns, ing, svc, strconv.Itoa(status)).Inc()
	}()
	if b == nil {
		http.Error(rec, "404 Not Found", http.StatusNotFound)
		return
	}
	ep := b.Pick()
	if ep == "" {
		http.Error(rec, "503 Service Temporarily Unavailable", http.StatusServiceUnavailable)
		return
	}
	c.proxy.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), endpointKey{}, ep)))
}

// proxyError answers 502 when the endpoint cannot be reached (504 when
// it timed out), as nginx does.
func (c *Controller) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusBadGateway
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		status = http.StatusGatewayTimeout
	}
	if r.Context().Err() == nil {
		c.log.Warn("proxying to the backend failed", "host", r.Host, "path", r.URL.Path, "endpoint", r.Context().Value(endpointKey{}), "err", err)
	}
	w.WriteHeader(status)
}

// statusRecorder remembers the final status code written.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 && code >= 200 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Serve serves HTTP on httpLn and HTTPS on httpsLn (either may be nil)
// until ctx ends, then waits up to ShutdownGrace for requests in flight.
func (c *Controller) Serve(ctx context.Context, httpLn, httpsLn net.Listener) error {
	errLog := slog.NewLogLogger(c.log.Handler(), slog.LevelWarn)
	var servers []*http.Server
	errc := make(chan error, 2)
	if httpLn != nil {
		srv := daemon.NewHTTPServer(c)
		srv.ErrorLog = errLog
		servers = append(servers, srv)
		c.log.Info("serving HTTP", "addr", httpLn.Addr().String())
		go func() { errc <- srv.Serve(httpLn) }()
	}
	if httpsLn != nil {
		srv := daemon.NewHTTPServer(c)
		srv.ErrorLog = errLog
		srv.TLSConfig = c.TLSConfig()
		servers = append(servers, srv)
		c.log.Info("serving HTTPS", "addr", httpsLn.Addr().String())
		go func() { errc <- srv.ServeTLS(httpsLn, "", "") }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), c.cfg.ShutdownGrace)
	defer cancel()
	for _, srv := range servers {
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = serr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// queueAllIngresses queues every Ingress' status check (a class changed).
func (c *Controller) queueAllIngresses() {
	for _, key := range c.ingresses.Store().ListKeys() {
		c.status.Add(key)
	}
}

func (c *Controller) processStatus(ctx context.Context) bool {
	key, shutdown := c.status.Get()
	if shutdown {
		return false
	}
	defer c.status.Done(key)
	if err := c.syncStatus(ctx, key); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("ingress status update failed; retrying", "ingress", key, "err", err)
			c.status.AddRateLimited(key)
		}
		return true
	}
	c.status.Forget(key)
	return true
}

// LoadBalancerIngress turns publish addresses into status entries: an IP
// as ip, anything else as hostname.
func LoadBalancerIngress(addrs []string) []api.IngressLoadBalancerIngress {
	var out []api.IngressLoadBalancerIngress
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil {
			out = append(out, api.IngressLoadBalancerIngress{IP: ip.String()})
		} else {
			out = append(out, api.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	return out
}

// syncStatus writes the publish addresses into an owned Ingress' status
// when they differ from what it holds.
func (c *Controller) syncStatus(ctx context.Context, key string) error {
	if len(c.cfg.PublishAddresses) == 0 {
		return nil
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ing, err := c.ingresses.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if !c.cfg.Class.Owns(ing, c.classes.Lister().List(nil)) {
		return nil
	}
	want := LoadBalancerIngress(c.cfg.PublishAddresses)
	if sameLoadBalancer(ing.Status.LoadBalancer.Ingress, want) {
		return nil
	}
	cp := *ing
	cp.Status.LoadBalancer.Ingress = want
	_, err = client.Resource[api.Ingress](c.cfg.Client).Namespace(ns).UpdateStatus(ctx, &cp)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.log.Info("ingress status updated", "ingress", key, "loadBalancer", c.cfg.PublishAddresses)
	}
	return err
}

func sameLoadBalancer(a, b []api.IngressLoadBalancerIngress) bool {
	return slices.EqualFunc(a, b, func(x, y api.IngressLoadBalancerIngress) bool {
		return x.IP == y.IP && x.Hostname == y.Hostname && len(x.Ports) == 0 && len(y.Ports) == 0
	})
}
