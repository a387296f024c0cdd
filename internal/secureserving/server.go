package secureserving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// The ConfigMap kube-apiserver publishes its client CA in.
const (
	authConfigMapNamespace = "kube-system"
	authConfigMapName      = "extension-apiserver-authentication"
	clientCAKey            = "client-ca-file"
)

// caLookupPeriod is how often the looked-up client CA is read again
// (kube's ConfigMap controller resyncs each minute).
const caLookupPeriod = time.Minute

// Server serves a handler over HTTPS behind delegated authentication and
// authorization.
type Server struct {
	opts    Options
	handler http.Handler
	log     *slog.Logger
	cert    tls.Certificate
	authn   *authenticator
	authz   *authorizer
	// lookup reads the client CA from the cluster; nil when --client-ca-file
	// is given or the lookup is off.
	lookup    *client.Client
	clientCAs atomic.Pointer[x509.CertPool]
}

// New prepares serving handler with opts: the serving certificate, the
// clients of the delegated reviews and the client CA. It fails on a
// certificate or kubeconfig that cannot be read, and on a failed client
// CA lookup unless TolerateLookupFailure.
func New(opts Options, handler http.Handler, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{opts: opts, handler: handler, log: log}
	if opts.SecurePort == 0 && opts.Listener == nil {
		return s, nil
	}
	// Every file first, so that a bad one is the only thing said.
	authnClient, err := reviewClient(opts.Authentication.Kubeconfig, "authentication-kubeconfig", log)
	if err != nil {
		return nil, err
	}
	authzClient, err := reviewClient(opts.Authorization.Kubeconfig, "authorization-kubeconfig", log)
	if err != nil {
		return nil, err
	}
	if opts.Authentication.ClientCAFile != "" {
		pool, err := pki.ReadCAPool(opts.Authentication.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		s.clientCAs.Store(pool)
	}
	if s.cert, err = opts.servingCertificate(log); err != nil {
		return nil, err
	}

	s.authn = &authenticator{clientCAs: s.clientCAs.Load}
	if authnClient != nil {
		s.authn.tokens = &TokenReviewer{Client: authnClient, TTL: opts.Authentication.CacheTTL}
	}
	switch {
	case opts.Authentication.ClientCAFile != "", opts.Authentication.SkipLookup:
	case authnClient == nil:
		log.Warn("no --authentication-kubeconfig to look up the client CA in configmap/" + authConfigMapName + " in " + authConfigMapNamespace + ": client certificate authentication won't work")
	default:
		s.lookup = authnClient
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.lookupClientCA(ctx)
		cancel()
		if err != nil {
			if !opts.Authentication.TolerateLookupFailure {
				return nil, fmt.Errorf("look up the client CA: %w (--authentication-tolerate-lookup-failure=false)", err)
			}
			log.Warn("looking up the client CA failed; client certificates are not accepted until it succeeds", "err", err)
		}
	}

	var reviews *AccessReviewer
	if authzClient != nil {
		reviews = &AccessReviewer{Client: authzClient, AllowTTL: opts.Authorization.AllowCacheTTL, DenyTTL: opts.Authorization.DenyCacheTTL}
	} else {
		log.Warn("no --authorization-kubeconfig: requests outside --authorization-always-allow-paths are forbidden")
	}
	s.authz = newAuthorizer(opts.Authorization, reviews)
	return s, nil
}

// reviewClient is the client of a --authentication-kubeconfig or
// --authorization-kubeconfig: that file, else the in-cluster
// configuration, else none (nil). Reviews are many and small: QPS 200,
// burst 400, 10 s each, as kube's.
func reviewClient(path, flag string, log *slog.Logger) (*client.Client, error) {
	var cfg *client.Config
	if path != "" {
		kc, err := kubeconfig.Load(path)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
		if cfg, err = kc.ClientConfig(""); err != nil {
			return nil, fmt.Errorf("--%s %s: %w", flag, path, err)
		}
	} else {
		var err error
		cfg, err = client.InClusterConfig()
		if errors.Is(err, client.ErrNotInCluster) {
			return nil, nil
		}
		if err != nil {
			log.Warn("reading the in-cluster configuration for --"+flag, "err", err)
			return nil, nil
		}
	}
	cfg.QPS, cfg.Burst, cfg.Timeout = 200, 400, 10*time.Second
	c, err := client.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	return c, nil
}

// lookupClientCA reads client-ca-file of kube-system's
// extension-apiserver-authentication ConfigMap.
func (s *Server) lookupClientCA(ctx context.Context) error {
	cm, err := client.Resource[api.ConfigMap](s.lookup).Namespace(authConfigMapNamespace).Get(ctx, authConfigMapName)
	if err != nil {
		return err
	}
	data := cm.Data[clientCAKey]
	if data == "" {
		return fmt.Errorf("configmap %s/%s has no %s", authConfigMapNamespace, authConfigMapName, clientCAKey)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(data)) {
		return fmt.Errorf("configmap %s/%s: no PEM certificate in %s", authConfigMapNamespace, authConfigMapName, clientCAKey)
	}
	s.clientCAs.Store(pool)
	return nil
}

// Handler is the served handler behind authentication and authorization.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.authn.authenticate(r)
		if err != nil {
			s.log.Debug("unauthorized", "path", r.URL.Path, "err", err)
			apierrors.WriteStatus(w, apierrors.NewUnauthorized("Unauthorized").Status())
			return
		}
		verb := strings.ToLower(r.Method)
		d, err := s.authz.authorize(r.Context(), u, verb, r.URL.Path)
		if d.allowed {
			s.handler.ServeHTTP(w, r)
			return
		}
		if err != nil {
			s.log.Warn("authorization failed", "user", u.Name, "path", r.URL.Path, "err", err)
			http.Error(w, fmt.Sprintf("Internal Server Error: %q: %v", r.RequestURI, err), http.StatusInternalServerError)
			return
		}
		s.log.Debug("forbidden", "user", u.Name, "verb", verb, "path", r.URL.Path, "reason", d.reason)
		apierrors.WriteStatus(w, forbidden(u.Name, verb, r.URL.Path, d.reason))
	})
}

// sanitizer keeps messages from looking like HTML, as kube does.
var sanitizer = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// forbidden is kube's refusal of a non-resource request.
func forbidden(user, verb, path, reason string) api.Status {
	msg := "forbidden: " + sanitizer.Replace(fmt.Sprintf("User %q cannot %s path %q", user, verb, path))
	if reason != "" {
		msg += ": " + reason
	}
	return api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: api.StatusFailure, Code: http.StatusForbidden, Reason: api.StatusReasonForbidden,
		Message: msg, Details: &api.StatusDetails{}}
}

// Serve serves HTTPS on Listener, or on BindAddress:SecurePort (an
// inherited socket, see daemon.Listen), until ctx ends; with neither it
// waits for ctx. It re-reads a looked-up client CA each minute.
func (s *Server) Serve(ctx context.Context) error {
	ln := s.opts.Listener
	if ln == nil {
		if s.opts.SecurePort == 0 {
			<-ctx.Done()
			return nil
		}
		var err error
		if ln, err = daemon.Listen(net.JoinHostPort(s.opts.BindAddress, strconv.Itoa(s.opts.SecurePort))); err != nil {
			return fmt.Errorf("secure serving: %w", err)
		}
	}
	if s.lookup != nil {
		go s.refreshClientCA(ctx)
	}
	srv := daemon.NewHTTPServer(s.Handler())
	srv.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)
	srv.TLSConfig = &tls.Config{
		// The client CA of the moment is named in the handshake, so
		// that clients offer only a certificate it signed (Go's pick
		// from several; kube's server does the same).
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				Certificates: []tls.Certificate{s.cert},
				// Verified by the authenticator, so that a bad
				// certificate is a 401 rather than a failed handshake
				// (kube's choice too).
				ClientAuth: tls.RequestClientCert,
				ClientCAs:  s.clientCAs.Load(),
			}, nil
		},
	}
	s.log.Info("serving securely", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("secure serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) refreshClientCA(ctx context.Context) {
	t := time.NewTicker(caLookupPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.lookupClientCA(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("looking up the client CA", "err", err)
		}
	}
}
