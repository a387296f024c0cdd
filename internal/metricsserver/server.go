package metricsserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/informer"
)

// Config assembles a Server.
type Config struct {
	// Client reads nodes and pods.
	Client *client.Client
	// KubeletTLS is the client side of TLS to kubelets: the client
	// certificate they accept and the CA of their serving certificates.
	KubeletTLS *tls.Config
	// Resolution is the scrape interval (--metric-resolution).
	Resolution time.Duration
	// KubeletTimeout bounds one scrape (default Resolution*0.9, at most 10 s).
	KubeletTimeout time.Duration
	// Authn authenticates the callers (the apiserver's front proxy).
	Authn *RequestHeader
	// ServingCert is the HTTPS certificate.
	ServingCert tls.Certificate
	Logger      *slog.Logger
}

// Server scrapes kubelets and serves the metrics API.
type Server struct {
	cfg   Config
	log   *slog.Logger
	store *storage
	kc    *http.Client
	nodes *informer.Informer[api.Node]
	pods  *informer.Informer[api.Pod]
	inf   *informer.Factory
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil || cfg.KubeletTLS == nil {
		return nil, errors.New("metrics server: a client and the kubelets' TLS configuration are required")
	}
	if cfg.Resolution <= 0 {
		cfg.Resolution = 15 * time.Second
	}
	if cfg.KubeletTimeout <= 0 {
		cfg.KubeletTimeout = min(cfg.Resolution*9/10, 10*time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	f := informer.NewFactory(cfg.Client, informer.FactoryOptions{Logger: cfg.Logger})
	s := &Server{cfg: cfg, log: cfg.Logger, store: newStorage(), inf: f,
		kc:    &http.Client{Transport: &http.Transport{TLSClientConfig: cfg.KubeletTLS, MaxIdleConnsPerHost: 2}, Timeout: cfg.KubeletTimeout},
		nodes: informer.Shared[api.Node](f, "", client.ListOptions{}),
		pods:  informer.Shared[api.Pod](f, "", client.ListOptions{})}
	return s, nil
}

// Handler is the HTTP handler (health checks and the metrics API).
func (s *Server) Handler() http.Handler { return s.routes() }

// Start starts the informers and, once they have synced, the scrape
// loop, until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	s.inf.Start(ctx)
	if !s.inf.WaitForCacheSync(ctx) {
		return fmt.Errorf("metrics server: caches not synced: %w", ctx.Err())
	}
	go s.scrapeLoop(ctx)
	return nil
}

// Run is Start, then HTTPS on l until ctx ends.
func (s *Server) Run(ctx context.Context, l net.Listener) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	srv := daemon.NewHTTPServer(s.Handler())
	srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{s.cfg.ServingCert},
		ClientAuth: tls.RequestClientCert}
	srv.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(l, "", "") }()
	s.log.Info("metrics server serving", "address", l.Addr().String(), "resolution", s.cfg.Resolution)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	s.inf.Wait()
	return nil
}

// scrapeLoop scrapes every node each resolution period.
func (s *Server) scrapeLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.Resolution)
	defer t.Stop()
	for {
		s.scrapeAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scrapeAll scrapes the nodes in parallel; a failing node keeps its last
// readings (and is logged), a deleted one is forgotten.
func (s *Server) scrapeAll(ctx context.Context) {
	nodes := s.nodes.Lister().List(nil)
	live := map[string]bool{}
	var wg sync.WaitGroup
	for _, n := range nodes {
		live[n.Name] = true
		wg.Go(func() {
			url, err := kubeletURL(n)
			if err == nil {
				var ns *nodeScrape
				if ns, err = scrape(ctx, s.kc, url); err == nil {
					s.store.store(n.Name, ns)
					return
				}
			}
			if ctx.Err() == nil {
				s.log.Warn("failed to scrape node", "node", n.Name, "err", err)
			}
		})
	}
	wg.Wait()
	s.store.mu.RLock()
	var gone []string
	for name := range s.store.nodes {
		if !live[name] {
			gone = append(gone, name)
		}
	}
	s.store.mu.RUnlock()
	for _, name := range gone {
		s.store.forgetNode(name)
	}
}
