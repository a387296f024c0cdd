package etcd_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
)

func start(t *testing.T, cfg etcd.Config) (*etcd.Backend, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs an embedded etcd (skipped with -short)")
	}
	if cfg.Logger == nil {
		cfg.Logger = etcdtest.Logger()
	}
	return etcd.Start(context.Background(), cfg)
}

func TestEmbeddedDataSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := start(t, etcd.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Embedded() {
		t.Fatal("Embedded() = false for an embedded server")
	}
	if err := b.Healthy(t.Context()); err != nil {
		t.Fatalf("Healthy: %v", err)
	}
	put, err := b.Client().Put(t.Context(), "/registry/x", "v1")
	if err != nil {
		t.Fatal(err)
	}
	// A second server on the same directory must fail at once, not hang.
	began := time.Now()
	if _, err := start(t, etcd.Config{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second server on the same data dir: err = %v, want 'in use'", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("second server took %v to fail", d)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := b.Healthy(t.Context()); err == nil {
		t.Fatal("Healthy after Close = nil")
	}

	b2, err := start(t, etcd.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer b2.Close()
	got, err := b2.Client().Get(t.Context(), "/registry/x")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v1" || got.Kvs[0].ModRevision != put.Header.Revision {
		t.Fatalf("after restart got %v, want v1 at revision %d", got.Kvs, put.Header.Revision)
	}
}

func TestPortInUse(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = start(t, etcd.Config{DataDir: t.TempDir(), ListenClientURL: "http://" + l.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("err = %v, want address already in use", err)
	}
}

func TestMissingDataDir(t *testing.T) {
	t.Parallel()
	if _, err := etcd.Start(t.Context(), etcd.Config{}); err == nil {
		t.Fatal("Start without data dir or servers: err = nil")
	}
}

func TestExternalServers(t *testing.T) {
	t.Parallel()
	emb := etcdtest.Start(t)
	ext, err := start(t, etcd.Config{Servers: emb.Endpoints()})
	if err != nil {
		t.Fatalf("connect to external: %v", err)
	}
	if ext.Embedded() {
		t.Fatal("external backend reports Embedded")
	}
	if _, err := ext.Client().Put(t.Context(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := ext.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing the external client leaves the server running.
	if err := emb.Healthy(t.Context()); err != nil {
		t.Fatalf("server after closing an external client: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := etcd.Start(ctx, etcd.Config{Servers: []string{"http://127.0.0.1:1"}, Logger: etcdtest.Logger(), StartTimeout: time.Second}); err == nil {
		t.Fatal("Start against a dead endpoint: err = nil")
	}
}

func compacted(t *testing.T, c *clientv3.Client, rev int64) bool {
	t.Helper()
	_, err := c.Get(t.Context(), "k", clientv3.WithRev(rev))
	if errors.Is(err, rpctypes.ErrCompacted) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

func TestCompactorsAgreeOnOneWinner(t *testing.T) {
	t.Parallel()
	b := etcdtest.Start(t)
	c := b.Client()
	put := func() int64 {
		r, err := c.Put(t.Context(), "k", "v")
		if err != nil {
			t.Fatal(err)
		}
		return r.Header.Revision
	}
	first := put()
	// Two apiservers, A and B, both start with an unknown clock.
	var va, ra, vb, rb int64
	var err error
	var comp int64
	va, ra, comp, err = etcd.CompactForTest(t.Context(), c, va, ra)
	if err != nil || comp != 0 || va != 1 {
		t.Fatalf("A round 1: version %d compacted %d err %v; want version 1, no compaction", va, comp, err)
	}
	vb, rb, comp, err = etcd.CompactForTest(t.Context(), c, vb, rb)
	if err != nil || comp != 0 || vb != 1 {
		t.Fatalf("B round 1 (lost CAS): version %d compacted %d err %v; want version 1 adopted", vb, comp, err)
	}
	put()
	// Round 2: A wins and compacts to what it saw in round 1; B loses.
	va, ra, comp, err = etcd.CompactForTest(t.Context(), c, va, ra)
	if err != nil || comp == 0 || comp < first {
		t.Fatalf("A round 2: compacted %d err %v; want a compaction at >= %d", comp, err, first)
	}
	if !compacted(t, c, first-1) {
		t.Fatalf("revision %d still readable after compaction to %d", first-1, comp)
	}
	_, _, comp2, err := etcd.CompactForTest(t.Context(), c, vb, rb)
	if err != nil || comp2 != 0 {
		t.Fatalf("B round 2: compacted %d err %v; want no compaction (A won)", comp2, err)
	}
	_ = ra
}

func TestRunCompactor(t *testing.T) {
	t.Parallel()
	b := etcdtest.Start(t)
	c := b.Client()
	r, err := c.Put(t.Context(), "k", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(t.Context(), "k", "v2"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { b.RunCompactor(ctx, 50*time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for !compacted(t, c, r.Header.Revision) {
		if time.Now().After(deadline) {
			t.Fatal("history not compacted within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The latest value is never compacted away.
	got, err := c.Get(t.Context(), "k")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v2" {
		t.Fatalf("latest value after compaction: %v %v", got, err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunCompactor did not return after cancel")
	}
}
