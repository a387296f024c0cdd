package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/apiserver/storage"
)

// newStore returns a store on a fresh embedded etcd, with its raw client.
func newStore(t testing.TB) (*storage.Store, *clientv3.Client) {
	t.Helper()
	b := etcdtest.Start(t)
	return storage.New(b.Client(), "/registry"), b.Client()
}

func mustCreate(t testing.TB, s *storage.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(context.Background(), key, []byte(value))
	if err != nil {
		t.Fatalf("create %s: %v", key, err)
	}
	return rev
}

func TestCreateGet(t *testing.T) {
	t.Parallel()
	s, cli := newStore(t)
	ctx := t.Context()
	rev := mustCreate(t, s, "pods/default/web", `{"a":1}`)

	// The prefix is part of the etcd key.
	raw, err := cli.Get(ctx, "/registry/pods/default/web")
	if err != nil || len(raw.Kvs) != 1 || string(raw.Kvs[0].Value) != `{"a":1}` {
		t.Fatalf("raw etcd key: %v %v", raw, err)
	}
	kv, err := s.Get(ctx, "pods/default/web")
	if err != nil {
		t.Fatal(err)
	}
	want := storage.KV{Key: "pods/default/web", Value: []byte(`{"a":1}`), ModRevision: rev, CreateRevision: rev}
	if kv.Key != want.Key || string(kv.Value) != string(want.Value) || kv.ModRevision != rev || kv.CreateRevision != rev {
		t.Fatalf("Get = %+v, want %+v", kv, want)
	}
	if _, err := s.Create(ctx, "pods/default/web", []byte("x")); !errors.Is(err, storage.ErrKeyExists) {
		t.Fatalf("second create: err = %v, want ErrKeyExists", err)
	}
	if _, err := s.Get(ctx, "pods/default/none"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get missing: err = %v, want ErrNotFound", err)
	}
	cur, err := s.CurrentRevision(ctx)
	if err != nil || cur < rev {
		t.Fatalf("CurrentRevision = %d, %v; want >= %d", cur, err, rev)
	}
}

func TestUpdatePreconditions(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	rev := mustCreate(t, s, "leases/a", "v1")

	tests := []struct {
		name     string
		key      string
		expected func() int64
		wantErr  func(error) bool
	}{
		{"missing key, any revision", "leases/none", func() int64 { return 0 }, func(err error) bool { return errors.Is(err, storage.ErrNotFound) }},
		{"missing key, some revision", "leases/none", func() int64 { return rev }, func(err error) bool { return errors.Is(err, storage.ErrNotFound) }},
		{"stale revision", "leases/a", func() int64 { return rev - 1 }, func(err error) bool {
			var c *storage.ConflictError
			return errors.As(err, &c) && c.Current.ModRevision == rev && string(c.Current.Value) == "v1" && c.Expected == rev-1
		}},
		{"current revision", "leases/a", func() int64 { return rev }, func(err error) bool { return err == nil }},
		{"any revision of an existing key", "leases/a", func() int64 { return 0 }, func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		newRev, err := s.Update(ctx, tt.key, []byte("v2"), tt.expected())
		if !tt.wantErr(err) {
			t.Errorf("%s: err = %v", tt.name, err)
		}
		if err == nil {
			kv, gerr := s.Get(ctx, tt.key)
			if gerr != nil || kv.ModRevision != newRev || string(kv.Value) != "v2" {
				t.Errorf("%s: after update Get = %+v, %v; want v2 at %d", tt.name, kv, gerr, newRev)
			}
			rev = newRev
		}
	}
}

func TestConcurrentWritersOneWins(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	rev := mustCreate(t, s, "configmaps/default/c", "0")
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	revs := make([]int64, writers)
	for i := range writers {
		wg.Go(func() {
			revs[i], errs[i] = s.Update(context.Background(), "configmaps/default/c", []byte(fmt.Sprint(i+1)), rev)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("writers %d and %d both won with expected revision %d", winner, i, rev)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("no writer won: %v", errs)
	}
	for i, err := range errs {
		if i == winner {
			continue
		}
		var c *storage.ConflictError
		if !errors.As(err, &c) || c.Current.ModRevision != revs[winner] || string(c.Current.Value) != fmt.Sprint(winner+1) {
			t.Errorf("loser %d: err = %v; want a conflict showing the winner's value at %d", i, err, revs[winner])
		}
	}
}

func TestDeletePreconditions(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	rev := mustCreate(t, s, "pods/ns/p", "v1")

	if _, _, err := s.Delete(ctx, "pods/ns/none", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete missing: %v", err)
	}
	var c *storage.ConflictError
	if _, _, err := s.Delete(ctx, "pods/ns/p", rev+100); !errors.As(err, &c) || c.Current.ModRevision != rev {
		t.Fatalf("delete with wrong revision: %v", err)
	}
	prev, drev, err := s.Delete(ctx, "pods/ns/p", rev)
	if err != nil || string(prev.Value) != "v1" || prev.ModRevision != rev || prev.Key != "pods/ns/p" || drev <= rev {
		t.Fatalf("delete = %+v, %d, %v", prev, drev, err)
	}
	if _, _, err := s.Delete(ctx, "pods/ns/p", rev); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	mustCreate(t, s, "pods/ns/q", "v1")
	if _, _, err := s.Delete(ctx, "pods/ns/q", 0); err != nil {
		t.Fatalf("delete with any revision: %v", err)
	}
}

func TestListPagesAtSnapshot(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	var want []string
	for i := range 10 {
		k := fmt.Sprintf("pods/default/p%02d", i)
		mustCreate(t, s, k, "v")
		want = append(want, k)
	}
	// Keys that share the text of the prefix but not the path stay out.
	mustCreate(t, s, "podsx/default/z", "v")
	mustCreate(t, s, "pods-other", "v")

	var got []string
	first, err := s.List(ctx, "pods/", storage.ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !first.More || first.RemainingCount != 7 || len(first.KVs) != 3 {
		t.Fatalf("first page: more %v remaining %d len %d", first.More, first.RemainingCount, len(first.KVs))
	}
	snapshot := first.Revision
	res := first
	for page := 0; ; page++ {
		for _, kv := range res.KVs {
			got = append(got, kv.Key)
		}
		if !res.More {
			break
		}
		// Writes between pages must not show in the snapshot.
		if _, err := s.Update(ctx, "pods/default/p09", []byte("changed"), 0); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, s, fmt.Sprintf("pods/default/p05x%d", page), "new")
		if _, _, err := s.Delete(ctx, fmt.Sprintf("pods/default/p%02d", 8-page), 0); err != nil {
			t.Fatal(err)
		}
		next := res.KVs[len(res.KVs)-1].Key + "\x00"
		res, err = s.List(ctx, "pods/", storage.ListOptions{Limit: 3, StartKey: next, Revision: snapshot})
		if err != nil {
			t.Fatal(err)
		}
		if res.Revision != snapshot {
			t.Fatalf("page revision %d, want the snapshot %d", res.Revision, snapshot)
		}
		for _, kv := range res.KVs {
			if kv.Key == "pods/default/p09" && string(kv.Value) != "v" {
				t.Fatalf("snapshot page shows a later write: %q", kv.Value)
			}
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("paged list = %v, want %v", got, want)
	}
	n, err := s.Count(ctx, "pods/")
	if err != nil || n != 10 {
		// 10 - 3 deletes + 3 creates.
		t.Fatalf("Count = %d, %v; want 10", n, err)
	}
	if _, err := s.List(ctx, "pods/", storage.ListOptions{StartKey: "services/a"}); err == nil {
		t.Fatal("start key outside the prefix: err = nil")
	}
}

func TestCompactedListAndWatch(t *testing.T) {
	t.Parallel()
	s, cli := newStore(t)
	ctx := t.Context()
	old := mustCreate(t, s, "pods/a/a", "v")
	mustCreate(t, s, "pods/a/b", "v")
	cur, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}
	var ce *storage.CompactedError
	if _, err := s.List(ctx, "pods/", storage.ListOptions{Revision: old}); !errors.As(err, &ce) || ce.Revision != old || ce.CompactRevision != cur {
		t.Fatalf("list at compacted revision: err = %v, want CompactedError{%d, %d}", err, old, cur)
	}
	// The compact revision itself is still readable.
	if _, err := s.List(ctx, "pods/", storage.ListOptions{Revision: cur}); err != nil {
		t.Fatalf("list at the compact revision: %v", err)
	}
	ch := s.Watch(ctx, "pods/", old)
	select {
	case ev, ok := <-ch:
		if !ok || !errors.As(ev.Err, &ce) || ce.Revision != old || ce.CompactRevision != cur {
			t.Fatalf("watch from compacted revision: %+v ok=%v", ev, ok)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event from a compacted watch")
	}
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("event after the compaction error: %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("compacted watch not closed")
	}
	if _, err := s.List(ctx, "pods/", storage.ListOptions{Revision: cur + 1000}); !errors.Is(err, storage.ErrFutureRevision) {
		t.Fatalf("list at a future revision: %v", err)
	}
}

func TestRequestTooLarge(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := t.Context()
	for _, size := range []int{1<<20 + 600<<10 /* over etcd's 1.5 MiB, under gRPC's 2 MiB */, 3 << 20} {
		_, err := s.Create(ctx, "configmaps/big", make([]byte, size))
		if !errors.Is(err, storage.ErrRequestTooLarge) {
			t.Errorf("create %d bytes: err = %v, want ErrRequestTooLarge", size, err)
		}
	}
	// A value just under the limit is fine and the store keeps working.
	mustCreate(t, s, "configmaps/ok", strings.Repeat("x", 1<<20))
	if _, err := s.Get(ctx, "configmaps/ok"); err != nil {
		t.Fatal(err)
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("needs an embedded etcd")
	}
	dir := t.TempDir()
	b, err := etcd.Start(t.Context(), etcd.Config{DataDir: dir, Logger: etcdtest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	ext, err := clientv3.New(clientv3.Config{Endpoints: b.Endpoints(), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	s := storage.New(ext, "/registry", storage.WithRequestTimeout(500*time.Millisecond))
	mustCreate(t, s, "a", "v")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "a"); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("get from a stopped etcd: %v, want ErrUnavailable", err)
	}
	// A caller's own cancellation is reported as such.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Get(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("get with a canceled context: %v", err)
	}
}
