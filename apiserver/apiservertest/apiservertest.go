package apiservertest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// Server is a running test apiserver.
type Server struct {
	*app.APIServer
	Options app.Options
	t       testing.TB
	ctx     context.Context
	cancel  context.CancelFunc
}

// Options returns options for a test server storing in dir.
func Options(dir string) app.Options {
	o := app.DefaultOptions()
	o.DataDir = dir
	o.CertDir = dir + "/pki"
	o.SecurePort = 0
	o.EtcdCompactionInterval = 0
	o.WatchBookmarkInterval = time.Second
	// No controller-manager makes the "default" service accounts here, so
	// pods would wait for one and be refused: tests that want
	// ServiceAccount admission clear this (kube's integration framework
	// does the same).
	o.DisableAdmissionPlugins = []string{"ServiceAccount"}
	return o
}

// Start starts an apiserver with a fresh embedded etcd in t.TempDir(); it is
// stopped when the test ends. Integration tests are skipped with -short.
func Start(t testing.TB, mutate ...func(*app.Options)) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs embedded etcd (skipped with -short)")
	}
	opts := Options(t.TempDir())
	for _, m := range mutate {
		m(&opts)
	}
	return StartWith(t, opts)
}

// StartWith starts an apiserver with opts (for restarts on the same data dir).
func StartWith(t testing.TB, opts app.Options) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{APIServer: app.New(opts, l, Logger()), Options: opts, t: t, ctx: ctx, cancel: cancel}
	if err := s.Start(ctx); err != nil {
		cancel()
		t.Fatalf("start apiserver: %v", err)
	}
	t.Cleanup(func() { s.Shutdown() })
	return s
}

// Shutdown stops the server and waits; safe to call twice.
func (s *Server) Shutdown() {
	s.cancel()
	if err := s.Wait(); err != nil {
		s.t.Logf("apiserver stopped with: %v", err)
	}
}

// WithTLS also serves HTTPS on a loopback port the kernel picks (bound here
// and kept, so no parallel test can take it before the server starts), with
// certificates made in the test's directory and the admin kubeconfig
// written beside them.
func WithTLS(o *app.Options) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	o.SecureListener = l
	o.SecurePort = l.Addr().(*net.TCPAddr).Port
	o.BindAddress = "127.0.0.1"
	o.AdvertiseAddress = "127.0.0.1"
	o.WriteKubeconfig = o.CertDir + "/admin.kubeconfig"
}

// Logger returns a logger for test servers: quiet unless MINIK8S_TEST_LOG is set.
func Logger() *slog.Logger {
	if os.Getenv("MINIK8S_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// AdminClient returns a client authenticated by the admin kubeconfig that a
// server started WithTLS wrote; it fails the test when there is none.
func (s *Server) AdminClient(t testing.TB) *client.Client {
	t.Helper()
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	cfg, err := kc.ClientConfig("")
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	return c
}
