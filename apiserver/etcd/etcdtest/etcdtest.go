// Package etcdtest starts an embedded etcd for tests: fresh temp data dir,
// free loopback ports, stopped when the test ends.
package etcdtest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/minik8s/minik8s/apiserver/etcd"
)

// Start returns a running embedded etcd in t.TempDir(), closed on cleanup.
// It skips the test with -short, since it needs a real server.
func Start(t testing.TB) *etcd.Backend {
	t.Helper()
	return StartConfig(t, etcd.Config{})
}

// StartConfig is Start with extra settings; DataDir defaults to t.TempDir().
func StartConfig(t testing.TB, cfg etcd.Config) *etcd.Backend {
	t.Helper()
	if testing.Short() {
		t.Skip("needs an embedded etcd (skipped with -short)")
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = Logger()
	}
	b, err := etcd.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start embedded etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close etcd: %v", err)
		}
	})
	return b
}

// Logger is quiet unless MINIK8S_TEST_LOG is set.
func Logger() *slog.Logger {
	if os.Getenv("MINIK8S_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
