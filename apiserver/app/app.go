package app

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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/csr"
	"github.com/minik8s/minik8s/apiserver/encryption"
	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/apiserver/openapi"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/server"
	"github.com/minik8s/minik8s/apiserver/servicealloc"
	"github.com/minik8s/minik8s/apiserver/storage"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/pki"
)

// SystemNamespaces exist from the start and may not be deleted.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// APIServer is a running apiserver.
type APIServer struct {
	opts     Options
	log      *slog.Logger
	backend  *etcd.Backend
	stores   []*registry.Store
	byName   map[string]*registry.Store
	handler  *server.Server
	listener net.Listener
	httpSrv  *http.Server

	secureListener net.Listener
	secureSrv      *http.Server
	pki            *pki.Bundle
	audit          *audit.Backend
	tokens         *authn.TokenFile
	metrics        *prometheus.Registry
	kubeletCert    kubeletClientCert

	wg      sync.WaitGroup
	errOnce sync.Once
	err     error
	cancel  context.CancelFunc
	done    chan struct{}
}

// New prepares an apiserver; listener, if not nil, replaces the insecure
// port (tests pass one on 127.0.0.1:0).
func New(opts Options, listener net.Listener, log *slog.Logger) *APIServer {
	if log == nil {
		log = slog.Default()
	}
	return &APIServer{opts: opts, listener: listener, log: log, byName: map[string]*registry.Store{}, done: make(chan struct{})}
}

// Addr returns the address of the plain-HTTP listener, once started.
func (a *APIServer) Addr() string { return addrOf(a.listener) }

// URL returns the base URL of the plain-HTTP listener, once started.
func (a *APIServer) URL() string { return "http://" + a.Addr() }

// Handler returns the HTTP handler (for in-process benchmarks).
func (a *APIServer) Handler() http.Handler { return a.handler }

// Backend returns the etcd backend.
func (a *APIServer) Backend() *etcd.Backend { return a.backend }

// Store returns the registry store of a group and resource, or nil.
func (a *APIServer) Store(group, resource string) *registry.Store {
	return a.byName[group+"/"+resource]
}

// Start brings the server up: etcd, stores and caches, bootstrap objects,
// then the listener. It returns once requests are being served.
func (a *APIServer) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	a.cancel = cancel
	// The files the flags name come first, before anything starts or
	// logs: a missing or malformed one is the only thing reported.
	crypt, kubeletCfg, err := a.loadFiles()
	if err != nil {
		cancel()
		return err
	}
	be, err := etcd.Start(ctx, etcd.Config{
		DataDir:         a.opts.DataDir,
		ListenClientURL: a.opts.EtcdClientURL,
		ListenPeerURL:   a.opts.EtcdPeerURL,
		Servers:         a.opts.EtcdServers,
		CAFile:          a.opts.EtcdCAFile,
		CertFile:        a.opts.EtcdCertFile,
		KeyFile:         a.opts.EtcdKeyFile,
		Logger:          a.log.With("component", "etcd"),
	})
	if err != nil {
		cancel()
		return fmt.Errorf("start etcd: %w", err)
	}
	a.backend = be
	st := storage.New(be.Client(), a.opts.EtcdPrefix)

	nsGetter := &namespaceGetter{}
	nodeGetter := &nodeGetter{}
	// kube-apiserver's order: mutating plugins run first (the chain runs all
	// Admit steps, then all Validate steps).
	chain := admission.NewChain(
		&admission.NamespaceLifecycle{Namespaces: nsGetter, Immortal: []string{"default", "kube-system", "kube-public"}},
		&admission.NodeRestriction{Nodes: nodeGetter},
		&admission.DefaultTolerationSeconds{NotReadySeconds: a.opts.DefaultNotReadyTolerationSeconds,
			UnreachableSeconds: a.opts.DefaultUnreachableTolerationSeconds},
	)

	a.metrics = prometheus.NewRegistry()
	a.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	alloc, err := servicealloc.New(st, a.opts.ServiceClusterIPRange, a.opts.ServiceNodePortRange)
	if err != nil {
		cancel()
		return err
	}
	for _, ri := range api.Resources {
		var vt registry.ValueTransformer
		if crypt.Configured(ri.Resource, ri.Group) {
			vt = crypt.For(ri.Resource, ri.Group)
		}
		s := registry.NewStore(registry.Config{
			Transformer:      vt,
			Info:             ri,
			Strategy:         strategyFor(ri, alloc),
			Storage:          st,
			Admission:        chain,
			BookmarkInterval: a.opts.WatchBookmarkInterval,
			EventBufferSize:  a.opts.WatchCacheEvents,
			Logger:           a.log,
		})
		if err := s.Cacher().Register(a.metrics); err != nil {
			cancel()
			return fmt.Errorf("register watch cache metrics of %s: %w", ri.Resource, err)
		}
		a.stores = append(a.stores, s)
		a.byName[ri.Group+"/"+ri.Resource] = s
	}
	nsGetter.store = a.Store("", "namespaces")
	nodeGetter.store = a.Store("", "nodes")
	if nsGetter.store == nil {
		cancel()
		return errors.New("the namespaces resource is not registered")
	}
	for _, s := range a.stores {
		s := s
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := s.Run(ctx); err != nil && ctx.Err() == nil {
				a.fail(fmt.Errorf("watch cache of %s: %w", s.Info.Resource, err))
			}
		}()
	}
	if a.opts.EtcdCompactionInterval > 0 {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			be.RunCompactor(ctx, a.opts.EtcdCompactionInterval)
		}()
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	for _, s := range a.stores {
		if err := s.Cacher().WaitReady(waitCtx); err != nil {
			cancel()
			return fmt.Errorf("watch cache of %s did not become ready: %w", s.Info.Resource, err)
		}
	}
	if err := a.bootstrap(ctx); err != nil {
		cancel()
		return err
	}
	if err := a.bootstrapPolicy(ctx); err != nil {
		cancel()
		return err
	}

	authorizer := a.authorizer()
	docs, err := openapi.New(api.Resources)
	if err != nil {
		cancel()
		return fmt.Errorf("openapi: %w", err)
	}
	kubeletCfg.Authorizer = authorizer
	a.handler = server.New(server.Config{
		Kubelet:           kubeletCfg,
		Filters:           []func(http.Handler) http.Handler{authz.Filter(authorizer)},
		OpenAPIV2:         docs.V2(),
		OpenAPIV3:         docs.V3(),
		Stores:            a.stores,
		MaxRequestBytes:   a.opts.MaxRequestBytes,
		MinRequestTimeout: a.opts.MinRequestTimeout,
		ExternalAddress:   a.opts.AdvertiseAddress,
		Metrics:           a.metrics,
		Logger:            a.log,
		LiveChecks:        []server.HealthCheck{{Name: "etcd", Check: be.Healthy}},
		ReadyChecks: []server.HealthCheck{{Name: "informer-sync", Check: func(context.Context) error {
			for _, s := range a.stores {
				if !s.Cacher().Ready() {
					return fmt.Errorf("watch cache of %s is not ready", s.Info.Resource)
				}
			}
			return nil
		}}},
	})
	if a.listener == nil && a.opts.InsecurePort > 0 {
		if err := checkLoopback(a.opts.InsecureBindAddress); err != nil {
			cancel()
			return err
		}
		addr := net.JoinHostPort(a.opts.InsecureBindAddress, strconv.Itoa(a.opts.InsecurePort))
		l, err := daemon.Listen(addr)
		if err != nil {
			cancel()
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		a.listener = l
	}
	if l := a.opts.SecureListener; l != nil || a.opts.SecurePort > 0 {
		if l == nil {
			addr := net.JoinHostPort(a.opts.BindAddress, strconv.Itoa(a.opts.SecurePort))
			var err error
			if l, err = daemon.Listen(addr); err != nil {
				cancel()
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
		}
		a.secureListener = l
		secured, tlsCfg, err := a.secureServing(a.handler)
		if err != nil {
			_ = l.Close()
			cancel()
			return err
		}
		csrs := &csr.Controller{Store: a.Store("certificates.k8s.io", "certificatesigningrequests"), CA: a.pki.CA,
			Authorizer: authorizer, Log: a.log.With("controller", "csr")}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			csrs.Run(ctx)
		}()
		a.secureSrv = &http.Server{Handler: secured, TLSConfig: tlsCfg, ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)}
		a.serve(func() error { return a.secureSrv.ServeTLS(l, "", "") })
	}
	if a.listener != nil {
		a.httpSrv = &http.Server{Handler: a.audited(trusted(audit.Capture(a.handler))), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
		l := a.listener
		a.serve(func() error { return a.httpSrv.Serve(l) })
	}
	if a.listener == nil && a.secureListener == nil {
		cancel()
		return errors.New("nothing to serve on: --secure-port and --insecure-port are both 0")
	}
	a.log.Info("apiserver serving", "https", addrOf(a.secureListener), "http", addrOf(a.listener), "etcd", be.Endpoints())
	a.startServiceControllers(ctx, alloc)
	go func() {
		<-ctx.Done()
		a.shutdown()
	}()
	return nil
}

// loadFiles reads what the flags name: the encryption configuration, the
// token file, the kubelet client certificate; and opens the audit log.
func (a *APIServer) loadFiles() (*encryption.Transformers, server.KubeletConfig, error) {
	var crypt *encryption.Transformers
	var err error
	if a.opts.EncryptionProviderConfig != "" {
		if crypt, err = encryption.Load(a.opts.EncryptionProviderConfig); err != nil {
			return nil, server.KubeletConfig{}, fmt.Errorf("--encryption-provider-config: %w", err)
		}
	}
	if a.opts.TokenAuthFile != "" {
		if a.tokens, err = authn.NewTokenFile(a.opts.TokenAuthFile); err != nil {
			return nil, server.KubeletConfig{}, fmt.Errorf("--token-auth-file: %w", err)
		}
	}
	kubeletCfg, err := a.kubeletConfig()
	if err != nil {
		return nil, server.KubeletConfig{}, err
	}
	if a.opts.AuditLogPath != "" {
		if a.audit, err = audit.NewFileBackend(a.opts.AuditLogPath, a.opts.AuditLogMaxSizeMB); err != nil {
			return nil, server.KubeletConfig{}, fmt.Errorf("--audit-log-path: %w", err)
		}
	}
	return crypt, kubeletCfg, nil
}

func addrOf(l net.Listener) string {
	if l == nil {
		return ""
	}
	return l.Addr().String()
}

// serve runs a listener's Serve loop, failing the server if it stops unexpectedly.
func (a *APIServer) serve(run func() error) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := run(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.fail(fmt.Errorf("serve: %w", err))
		}
	}()
}

func (a *APIServer) fail(err error) {
	a.errOnce.Do(func() {
		a.err = err
		a.log.Error("apiserver failed", "err", err)
		a.cancel()
	})
}

func (a *APIServer) shutdown() {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range []*http.Server{a.httpSrv, a.secureSrv} {
		if srv != nil {
			// Watches are long requests; close them rather than wait.
			_ = srv.Shutdown(sctx)
			_ = srv.Close()
		}
	}
	a.wg.Wait()
	if a.audit != nil {
		if err := a.audit.Close(); err != nil {
			a.log.Warn("close audit log", "err", err)
		}
	}
	if a.backend != nil {
		if err := a.backend.Close(); err != nil {
			a.log.Warn("close etcd", "err", err)
		}
	}
	close(a.done)
}

// Wait blocks until the server has stopped and returns why.
func (a *APIServer) Wait() error {
	<-a.done
	return a.err
}

// Stop stops the server and waits for it.
func (a *APIServer) Stop() error {
	a.cancel()
	return a.Wait()
}

// Run starts the server and serves until ctx ends.
func Run(ctx context.Context, opts Options, log *slog.Logger) error {
	a := New(opts, nil, log)
	if err := a.Start(ctx); err != nil {
		return err
	}
	return a.Wait()
}

// bootstrap creates the system namespaces if they are missing.
func (a *APIServer) bootstrap(ctx context.Context) error {
	ns := a.Store("", "namespaces")
	for _, name := range SystemNamespaces {
		obj := ns.New()
		obj.GetObjectMeta().Name = name
		if _, err := ns.Create(ctx, "", obj, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	}
	return nil
}

// namespaceGetter answers NamespaceLifecycle from the watch cache, and from
// etcd when the cache has not seen a namespace yet (it may lag a fresh create).
type namespaceGetter struct{ store *registry.Store }

func (g *namespaceGetter) NamespacePhase(ctx context.Context, name string, live bool) (string, bool, error) {
	ns, found, err := lookup[api.Namespace](ctx, g.store, "", name, live)
	if err != nil || !found {
		return "", found, err
	}
	if ns.DeletionTimestamp != nil {
		return string(api.NamespaceTerminating), true, nil
	}
	return string(ns.Status.Phase), true, nil
}

// nodeGetter reads Nodes for NodeRestriction.
type nodeGetter struct{ store *registry.Store }

func (g *nodeGetter) GetNode(ctx context.Context, name string) (*api.Node, bool, error) {
	return lookup[api.Node](ctx, g.store, "", name, true)
}
