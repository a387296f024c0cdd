package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/policy"
	"github.com/minik8s/minik8s/apiserver/admission/webhook"
	"github.com/minik8s/minik8s/apiserver/aggregator"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/crd"
	"github.com/minik8s/minik8s/apiserver/csr"
	"github.com/minik8s/minik8s/apiserver/encryption"
	"github.com/minik8s/minik8s/apiserver/escalation"
	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/apiserver/fieldmanager"
	"github.com/minik8s/minik8s/apiserver/openapi"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/review"
	"github.com/minik8s/minik8s/apiserver/server"
	"github.com/minik8s/minik8s/apiserver/serviceaccount"
	"github.com/minik8s/minik8s/apiserver/servicealloc"
	"github.com/minik8s/minik8s/apiserver/serviceresolver"
	"github.com/minik8s/minik8s/apiserver/storage"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/pki"
)

// AdmissionPlugins are the admission plugins, all on by default, in
// kube-apiserver's order: mutating steps run first (the chain runs all
// Admit steps, then all Validate steps).
var AdmissionPlugins = []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "PodSecurity", "DefaultTolerationSeconds",
	"DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval", "CertificateSigning", "CertificateSubjectRestriction",
	"DefaultIngressClass", "MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}

// SystemNamespaces exist from the start and may not be deleted.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// APIServer is a running apiserver.
type APIServer struct {
	opts     Options
	log      *slog.Logger
	backend  *etcd.Backend
	stores   []*registry.Store
	docs     *openapi.Docs
	byName   map[string]*registry.Store
	crds     *crd.Controller
	handler  *server.Server
	listener net.Listener
	httpSrv  *http.Server

	secureListener net.Listener
	secureSrv      *http.Server
	pki            *pki.Bundle
	tlsConfig      *tls.Config
	audit          *audit.Backend
	tokens         *authn.TokenFile
	metrics        *prometheus.Registry
	kubeletCert    kubeletClientCert
	saKeys         *serviceaccount.Keys
	sa             *serviceAccounts

	// What one start-up phase makes for a later one.
	crypt      *encryption.Transformers
	kubeletCfg server.KubeletConfig
	alloc      *servicealloc.Allocator
	authorizer authz.Authorizer
	// rbacRules are the RBAC objects the authorizer and the escalation
	// check read.
	rbacRules  *cachedRules
	aggregator *aggregator.Aggregator
	proxyCert  atomic.Pointer[tls.Certificate]
	advOnce    sync.Once
	adv        net.IP

	// undo is what start-up has started, each entry undone in reverse order
	// on shutdown, or as soon as a later phase fails.
	undo []func()

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

// Handler returns what the plain-HTTP port serves, once started: the whole
// filter chain, every request as the trusted local administrator (for
// in-process benchmarks).
func (a *APIServer) Handler() http.Handler { return a.handler.HandlerChain(trusted) }

// Backend returns the etcd backend.
func (a *APIServer) Backend() *etcd.Backend { return a.backend }

// Store returns the registry store of a group and resource, or nil.
func (a *APIServer) Store(group, resource string) *registry.Store {
	return a.byName[group+"/"+resource]
}

// Start brings the server up phase by phase and returns once requests are
// being served. Whatever a phase starts it registers in a.undo, so that a
// failed phase leaves nothing running: the ones before it are undone as on
// shutdown, and Wait returns the error too.
func (a *APIServer) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	a.cancel = cancel
	for _, phase := range []func(context.Context) error{
		a.syncSharedCerts,  // cluster CAs from --shared-cert-dir, before any certificate
		a.loadFiles,        // what the flags name, before anything starts
		a.startStorage,     // etcd, admission, one registry store per resource
		a.startWatchCaches, // each store's cache filled from etcd; compaction
		a.bootstrap,        // system namespaces, the RBAC bootstrap policy
		a.buildAPI,         // authorizer, OpenAPI, the routes
		a.listen,           // the plain-HTTP and HTTPS sockets
		a.ensurePKI,        // certificates and kubeconfigs, when serving HTTPS
		a.serve,            // the filter chains served; the controllers
	} {
		if err := phase(ctx); err != nil {
			a.errOnce.Do(func() { a.err = err })
			cancel()
			a.shutdown()
			return err
		}
	}
	go func() {
		<-ctx.Done()
		a.shutdown()
	}()
	return nil
}

// onUndo registers f to run on shutdown, before everything registered
// earlier.
func (a *APIServer) onUndo(f func()) { a.undo = append(a.undo, f) }

// loadFiles reads what the flags name: the encryption configuration, the
// token file, the kubelet client certificate, the front-proxy files; and
// opens the audit log. A
// missing or malformed file is then the only thing reported.
func (a *APIServer) loadFiles(context.Context) error {
	var err error
	if a.opts.EncryptionProviderConfig != "" {
		if a.crypt, err = encryption.Load(a.opts.EncryptionProviderConfig); err != nil {
			return fmt.Errorf("--encryption-provider-config: %w", err)
		}
	}
	if a.opts.TokenAuthFile != "" {
		if a.tokens, err = authn.NewTokenFile(a.opts.TokenAuthFile); err != nil {
			return fmt.Errorf("--token-auth-file: %w", err)
		}
	}
	if a.kubeletCfg, err = a.kubeletConfig(); err != nil {
		return err
	}
	if err := a.loadFrontProxyFiles(); err != nil {
		return err
	}
	if a.saKeys, err = a.loadServiceAccountKeys(); err != nil {
		return err
	}
	if a.opts.AuditLogPath != "" {
		if a.audit, err = audit.NewFileBackend(a.opts.AuditLogPath, a.opts.AuditLogMaxSizeMB); err != nil {
			return fmt.Errorf("--audit-log-path: %w", err)
		}
		a.onUndo(func() {
			if err := a.audit.Close(); err != nil {
				a.log.Warn("close audit log", "err", err)
			}
		})
	}
	return nil
}

// startStorage starts (or connects to) etcd and builds one registry store
// per served resource, each with the admission chain, its strategy and its
// value transformer (encryption at rest).
func (a *APIServer) startStorage(ctx context.Context) error {
	etcdCfg, err := a.etcdConfig()
	if err != nil {
		return err
	}
	be, err := etcd.Start(ctx, etcdCfg)
	if err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}
	a.backend = be
	a.onUndo(func() {
		if err := be.Close(); err != nil {
			a.log.Warn("close etcd", "err", err)
		}
	})
	st := storage.New(be.Client(), a.opts.EtcdPrefix)

	nsGetter := &namespaceGetter{}
	nodeGetter := &nodeGetter{}
	saGetter := &objectGetter{}
	hooks := &admissionSource{}
	// The authorizer is built later (buildAPI); CEL expressions ask it at
	// request time.
	celAuthz := authz.AuthorizerFunc(func(ctx context.Context, at authz.Attributes) (authz.Decision, string, error) {
		if a.authorizer == nil {
			return authz.NoOpinion, "", errors.New("no authorizer yet")
		}
		return a.authorizer.Authorize(ctx, at)
	})
	mutatingWebhooks, validatingWebhooks := webhook.New(webhook.Config{Source: hooks, Namespaces: hooks, Authorizer: celAuthz,
		Resolver: &serviceresolver.Resolver{Lister: hooks, Routing: serviceresolver.Endpoints}, Logger: a.log})
	quotas := &quotaAccess{}
	ranges := &limitRanges{}
	priorities := &priorityClasses{}
	runtimeClasses := &runtimeClasses{}
	storageClasses := &storageClasses{}
	ingressClasses := &ingressClasses{}
	policies := policy.New(policy.Config{Source: hooks, Params: hooks, Namespaces: hooks, Authorizer: celAuthz, Logger: a.log})
	mutatingPolicies := policy.NewMutating(policy.MutatingConfig{Source: hooks, Params: hooks, Namespaces: hooks, Authorizer: celAuthz, Logger: a.log})
	// RBAC writes are checked against the RBAC data the authorizer reads
	// (filled once the stores exist), their exceptions asked of the
	// authorizer.
	a.rbacRules = &cachedRules{}
	escalations := escalation.New(celAuthz, a.rbacRules)
	podSecurity, err := newPodSecurity(a.opts.AdmissionControlConfigFile, hooks, a.log)
	if err != nil {
		return err
	}
	// kube-apiserver's order: mutating plugins run first (the chain runs all
	// Admit steps, then all Validate steps).
	var plugins []admission.Plugin
	for _, p := range []admission.Plugin{
		&admission.NamespaceLifecycle{Namespaces: nsGetter, Immortal: []string{"default", "kube-system", "kube-public"}},
		&admission.LimitRanger{LimitRanges: ranges},
		&admission.ServiceAccount{ServiceAccounts: saGetter},
		&admission.NodeRestriction{Nodes: nodeGetter, Pods: saGetter, ServiceAccounts: saGetter,
			Volumes: volumeGetter{a}, Authorizer: celAuthz},
		podSecurity,
		&admission.Priority{Classes: priorities},
		&admission.DefaultTolerationSeconds{NotReadySeconds: a.opts.DefaultNotReadyTolerationSeconds,
			UnreachableSeconds: a.opts.DefaultUnreachableTolerationSeconds},
		&admission.DefaultStorageClass{Classes: storageClasses},
		&admission.StorageObjectInUseProtection{},
		&admission.PersistentVolumeClaimResize{Classes: storageClasses},
		&admission.RuntimeClass{Classes: runtimeClasses},
		// Which signers a user may approve and sign for, and no
		// system:masters client certificates (issue 26).
		&admission.CertificateApproval{Authorizer: celAuthz, Log: a.log},
		&admission.CertificateSigning{Authorizer: celAuthz, Log: a.log},
		&admission.CertificateSubjectRestriction{},
		&admission.DefaultIngressClass{Classes: ingressClasses},
		// The dynamic plugins come last, as in kube-apiserver: webhooks
		// see the object the built-in plugins mutated, and validate
		// after the built-in validators; mutating policies run before
		// mutating webhooks.
		mutatingPolicies,
		mutatingWebhooks,
		policies,
		validatingWebhooks,
		// ResourceQuota charges last, once nothing else may refuse.
		&admission.ResourceQuota{Quotas: quotas},
	} {
		if !slices.Contains(a.opts.DisableAdmissionPlugins, p.Name()) {
			plugins = append(plugins, p)
		}
	}
	chain := admission.NewChain(plugins...)

	a.metrics = prometheus.NewRegistry()
	a.metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := mutatingWebhooks.Register(a.metrics); err != nil {
		return fmt.Errorf("register admission webhook metrics: %w", err)
	}
	if err := podSecurity.Register(a.metrics); err != nil {
		return fmt.Errorf("register PodSecurity metrics: %w", err)
	}

	if a.alloc, err = servicealloc.New(st, a.opts.ServiceClusterIPRange, a.opts.ServiceNodePortRange); err != nil {
		return err
	}
	// The published schemas drive server-side apply: built once, here.
	if a.docs, err = openapi.New(slices.Concat(api.Resources, api.ReviewResources)); err != nil {
		return fmt.Errorf("openapi: %w", err)
	}
	fields, err := fieldmanager.New(a.docs.Schemas())
	if err != nil {
		return fmt.Errorf("field manager: %w", err)
	}
	for _, ri := range api.Resources {
		var vt registry.ValueTransformer
		if a.crypt.Configured(ri.Resource, ri.Group) {
			vt = a.crypt.For(ri.Resource, ri.Group)
		}
		cfg := registry.Config{
			Transformer:      vt,
			Info:             ri,
			Strategy:         strategyFor(ri, a.alloc),
			Storage:          st,
			Admission:        chain,
			BookmarkInterval: a.opts.WatchBookmarkInterval,
			EventBufferSize:  a.opts.WatchCacheEvents,
			FieldManager:     fields.For(ri),
			Logger:           a.log,
		}
		if ri.Group == api.RBACGroupName {
			cfg.Guard = escalations
		}
		s := registry.NewStore(cfg)
		if err := s.Cacher().Register(a.metrics); err != nil {
			return fmt.Errorf("register watch cache metrics of %s: %w", ri.Resource, err)
		}
		a.stores = append(a.stores, s)
		if ri.Preferred() {
			a.byName[ri.Group+"/"+ri.Resource] = s
		}
	}
	a.crds, err = crd.New(crd.Config{CRDs: a.Store(api.APIExtensionsGroupName, "customresourcedefinitions"),
		Storage: st, Admission: chain, Docs: a.docs, Schemas: a.docs.Schemas(),
		BookmarkInterval: a.opts.WatchBookmarkInterval, EventBufferSize: a.opts.WatchCacheEvents,
		Transformer: func(group, resource string) registry.ValueTransformer {
			if a.crypt.Configured(resource, group) {
				return a.crypt.For(resource, group)
			}
			return nil
		},
		Logger: a.log})
	if err != nil {
		return fmt.Errorf("custom resources: %w", err)
	}
	*a.rbacRules = cachedRules{
		clusterRoleBindings: a.Store(api.RBACGroupName, "clusterrolebindings"),
		roleBindings:        a.Store(api.RBACGroupName, "rolebindings"),
		clusterRoles:        a.Store(api.RBACGroupName, "clusterroles"),
		roles:               a.Store(api.RBACGroupName, "roles"),
	}
	nsGetter.store = a.Store("", "namespaces")
	nodeGetter.store = a.Store("", "nodes")
	quotas.store = a.Store("", "resourcequotas")
	ranges.store = a.Store("", "limitranges")
	priorities.store = a.Store("scheduling.k8s.io", "priorityclasses")
	runtimeClasses.store = a.Store("node.k8s.io", "runtimeclasses")
	storageClasses.store = a.Store("storage.k8s.io", "storageclasses")
	ingressClasses.store = a.Store("networking.k8s.io", "ingressclasses")
	if nsGetter.store == nil {
		return errors.New("the namespaces resource is not registered")
	}
	*hooks = admissionSource{mutating: a.Store("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
		validating:       a.Store("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
		policies:         a.Store("admissionregistration.k8s.io", "validatingadmissionpolicies"),
		bindings:         a.Store("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
		mutatingPolicies: a.Store("admissionregistration.k8s.io", "mutatingadmissionpolicies"),
		mutatingBindings: a.Store("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"),
		stores:           a.byName,
		custom:           a.crds,
		namespaces:       nsGetter.store, pods: a.Store("", "pods"), services: a.Store("", "services"), slices: a.Store("discovery.k8s.io", "endpointslices")}
	*saGetter = objectGetter{sas: a.Store("", "serviceaccounts"), pods: a.Store("", "pods"),
		secrets: a.Store("", "secrets"), nodes: a.Store("", "nodes")}
	a.sa, err = a.newServiceAccounts(a.saKeys, saGetter)
	return err
}

// strategyFor is a resource's registry strategy; the CRD kind's is
// package crd's.
func strategyFor(ri api.ResourceInfo, alloc *servicealloc.Allocator) registry.Strategy {
	if ri.Group == api.APIExtensionsGroupName && ri.Resource == "customresourcedefinitions" {
		return crd.NewStrategy()
	}
	return registry.StrategyFor(ri, alloc)
}

// startWatchCaches runs every store's watch cache (and etcd compaction)
// until ctx ends, and waits until each cache holds its resource.
func (a *APIServer) startWatchCaches(ctx context.Context) error {
	// Every goroutine of the server is in a.wg and stops when ctx ends;
	// the servers, registered later, are shut down before the wait.
	a.onUndo(a.wg.Wait)
	for _, s := range a.stores {
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
			a.backend.RunCompactor(ctx, a.opts.EtcdCompactionInterval)
		}()
	}
	if err := a.startSnapshots(ctx); err != nil {
		return err
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	for _, s := range a.stores {
		if err := s.Cacher().WaitReady(waitCtx); err != nil {
			return fmt.Errorf("watch cache of %s did not become ready: %w", s.Info.Resource, err)
		}
	}
	// The custom resources, once the CRDs' cache is filled.
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.crds.Run(ctx)
	}()
	// The custom resources stored before a restart are served as soon as
	// the server is.
	if err := a.crds.WaitSynced(waitCtx); err != nil {
		return fmt.Errorf("custom resources not served: %w", err)
	}
	return nil
}

// bootstrap creates what every cluster starts with and an administrator
// may not have made: the system namespaces, the system PriorityClasses,
// the API priority and fairness defaults and the RBAC bootstrap policy.
func (a *APIServer) bootstrap(ctx context.Context) error {
	if err := a.bootstrapNamespaces(ctx); err != nil {
		return err
	}
	if err := a.bootstrapLegacyTokenTracking(ctx); err != nil {
		return err
	}
	if err := a.bootstrapBuiltinObjects(ctx); err != nil {
		return err
	}
	return a.bootstrapPolicy(ctx)
}

// buildAPI builds the routes: resources, discovery, OpenAPI, health checks
// and metrics, with the authorizer and audit log their filter chains use.
func (a *APIServer) buildAPI(ctx context.Context) error {
	a.authorizer = a.newAuthorizer()
	docs := a.docs
	a.kubeletCfg.Authorizer = a.authorizer
	var oidc server.OIDCDiscovery
	if a.sa.oidc != nil {
		oidc = a.sa.oidc
	}
	agg, err := a.newAggregator()
	if err != nil {
		return err
	}
	a.aggregator = agg
	// kube-apiserver's etcd checks: "etcd" in every health endpoint,
	// "etcd-readiness" in /readyz, each sending at most one probe per
	// half its timeout.
	etcdLive := newEtcdCheck(a.backend.Client(), a.opts.EtcdPrefix, etcdHealthcheckTimeout, ctx.Done())
	etcdReady := newEtcdCheck(a.backend.Client(), a.opts.EtcdPrefix, etcdReadycheckTimeout, ctx.Done())
	a.handler = server.New(server.Config{
		Aggregator: agg,
		Tokens:     a.sa.requests,
		OIDC:       oidc,
		Kubelet:    a.kubeletCfg,
		Authorizer: a.authorizer,
		Reviewer: &review.Reviewer{Authorizer: a.authorizer, Authenticator: authn.Union(a.tokenAuthenticators()...),
			APIAudiences: a.opts.apiAudiences()},
		Audit:             a.audit,
		OpenAPIV2:         docs.V2(),
		OpenAPIV3:         docs.V3(),
		Stores:            a.stores,
		Custom:            a.crds,
		MaxRequestBytes:   a.opts.MaxRequestBytes,
		Profiling:         a.opts.Profiling,
		MinRequestTimeout: a.opts.MinRequestTimeout,
		RequestTimeout:    a.opts.RequestTimeout,

		MaxRequestsInFlight:         a.opts.MaxRequestsInFlight,
		MaxMutatingRequestsInFlight: a.opts.MaxMutatingRequestsInFlight,

		ExternalAddress:   a.opts.AdvertiseAddress,
		Metrics:           a.metrics,
		Logger:            a.log,
		LiveChecks:        []server.HealthCheck{{Name: "etcd", Check: etcdLive.Check}},
		ComponentStatuses: newComponentProbes(a.backend.Healthy),
		ReadyChecks: []server.HealthCheck{{Name: "etcd-readiness", Check: etcdReady.Check}, {Name: "poststarthook/crd-informer-synced", Check: func(context.Context) error {
			if !a.crds.Synced() {
				return errors.New("the custom resources are not served yet")
			}
			return nil
		}}, {Name: "informer-sync", Check: func(context.Context) error {
			for _, s := range a.stores {
				if !s.Cacher().Ready() {
					return fmt.Errorf("watch cache of %s is not ready", s.Info.Resource)
				}
			}
			return nil
		}}},
	})
	return nil
}

// listen binds the local plain-HTTP port (unless New was given a listener)
// and the HTTPS port, each when configured.
func (a *APIServer) listen(context.Context) error {
	if a.listener == nil && a.opts.InsecurePort > 0 {
		if err := checkLoopback(a.opts.InsecureBindAddress); err != nil {
			return err
		}
		addr := net.JoinHostPort(a.opts.InsecureBindAddress, strconv.Itoa(a.opts.InsecurePort))
		l, err := daemon.Listen(addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		a.listener = l
	}
	if a.listener != nil {
		l := a.listener
		a.onUndo(func() { _ = l.Close() })
	}
	if l := a.opts.SecureListener; l != nil || a.opts.SecurePort > 0 {
		if l == nil {
			addr := net.JoinHostPort(a.opts.BindAddress, strconv.Itoa(a.opts.SecurePort))
			var err error
			if l, err = daemon.Listen(addr); err != nil {
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
		}
		a.secureListener = l
		a.onUndo(func() { _ = l.Close() })
	}
	if a.listener == nil && a.secureListener == nil {
		return errors.New("nothing to serve on: --secure-port and --insecure-port are both 0")
	}
	return nil
}

// serve serves each listener through its filter chain, then starts the
// controllers that live in the apiserver: CSR signing (with HTTPS) and the
// Service IP and port repair loops.
func (a *APIServer) serve(ctx context.Context) error {
	if l := a.secureListener; l != nil {
		nodes := a.Store("", "nodes")
		csrs := &csr.Controller{Store: a.Store("certificates.k8s.io", "certificatesigningrequests"), CA: a.pki.CA,
			Authorizer: a.authorizer, ApproveServing: a.opts.ApproveKubeletServingCertificates,
			Nodes: func(ctx context.Context, name string) (*api.Node, error) {
				o, err := nodes.Get(ctx, "", name)
				if err != nil {
					return nil, err
				}
				n, ok := o.(*api.Node)
				if !ok {
					return nil, fmt.Errorf("nodes store returned %T", o)
				}
				return n, nil
			},
			OtherNodes: func(ctx context.Context) ([]*api.Node, error) {
				res, err := nodes.List(ctx, "", registry.ListOptions{})
				if err != nil {
					return nil, err
				}
				out := make([]*api.Node, 0, len(res.Items))
				for _, it := range res.Items {
					if n, ok := it.Object.(*api.Node); ok {
						out = append(out, n)
					}
				}
				return out, nil
			},
			Reserved: a.reservedServingNames(),
			Log:      a.log.With("controller", "csr")}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			csrs.Run(ctx)
		}()
		a.secureSrv = a.newHTTPServer(a.handler.HandlerChain(a.authenticate()))
		a.secureSrv.TLSConfig = a.tlsConfig
		a.secureSrv.ErrorLog = slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)
		a.runServer(func() error { return a.secureSrv.ServeTLS(l, "", "") })
	}
	if l := a.listener; l != nil {
		a.httpSrv = a.newHTTPServer(a.handler.HandlerChain(trusted))
		a.httpSrv.ErrorLog = slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)
		a.runServer(func() error { return a.httpSrv.Serve(l) })
	}
	a.onUndo(a.stopServers)
	a.log.Info("apiserver serving", "https", addrOf(a.secureListener), "http", addrOf(a.listener), "etcd", a.backend.Endpoints())
	a.startServiceControllers(ctx, a.alloc)
	if err := a.startPodRoutes(ctx); err != nil {
		return err
	}
	return a.startAggregator(ctx)
}

// newHTTPServer is a listener's server of h, with kube-apiserver's idle
// and header timeouts (tests shorten the idle one through
// Options.ServingIdleTimeout).
func (a *APIServer) newHTTPServer(h http.Handler) *http.Server {
	srv := daemon.NewHTTPServer(h)
	if a.opts.ServingIdleTimeout > 0 {
		srv.IdleTimeout = a.opts.ServingIdleTimeout
	}
	return srv
}

func addrOf(l net.Listener) string {
	if l == nil {
		return ""
	}
	return l.Addr().String()
}

// runServer runs a listener's Serve loop, failing the server if it stops unexpectedly.
func (a *APIServer) runServer(run func() error) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := run(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.fail(fmt.Errorf("serve: %w", err))
		}
	}()
}

// stopServers stops serving; watches are long requests, closed rather than
// waited for.
func (a *APIServer) stopServers() {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range []*http.Server{a.httpSrv, a.secureSrv} {
		if srv != nil {
			_ = srv.Shutdown(sctx)
			_ = srv.Close()
		}
	}
}

func (a *APIServer) fail(err error) {
	a.errOnce.Do(func() {
		a.err = err
		a.log.Error("apiserver failed", "err", err)
		a.cancel()
	})
}

// shutdown undoes start-up, last phase first; the context has ended.
func (a *APIServer) shutdown() {
	for i := len(a.undo) - 1; i >= 0; i-- {
		a.undo[i]()
	}
	a.undo = nil
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
	// Starting makes several times the heap it keeps (the schemas parsed
	// for server-side apply and the CRD controller, the bootstrap policy's
	// writes, etcd's start); the runtime would return those pages to the
	// OS only slowly, so an idle apiserver holds them: return them now.
	debug.FreeOSMemory()
	return a.Wait()
}

// bootstrapNamespaces creates the system namespaces if they are missing.
// LegacyTokenTrackingConfigMap is the kube-system ConfigMap in which
// kube-apiserver records (key "since", a date) when it began tracking the
// use of legacy service-account token secrets; the controller-manager's
// legacy-service-account-token-cleaner reads it.
const LegacyTokenTrackingConfigMap = "kube-apiserver-legacy-service-account-token-tracking"

// bootstrapLegacyTokenTracking creates LegacyTokenTrackingConfigMap, dated
// today, unless it exists.
func (a *APIServer) bootstrapLegacyTokenTracking(ctx context.Context) error {
	cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: LegacyTokenTrackingConfigMap, Namespace: api.NamespaceSystem},
		Data: map[string]string{"since": time.Now().UTC().Format(time.DateOnly)}}
	if _, err := a.Store("", "configmaps").Create(ctx, api.NamespaceSystem, cm, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create configmap %s/%s: %w", api.NamespaceSystem, LegacyTokenTrackingConfigMap, err)
	}
	return nil
}

func (a *APIServer) bootstrapNamespaces(ctx context.Context) error {
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
