package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// startNodeGraph returns the Node authorizer's graph of pods and
// PersistentVolumes, filled from their watch caches, and keeps it current
// from their watches until shutdown, as kube-apiserver's graph populator
// does from its informers: a kubelet's check is then a lookup.
func (a *APIServer) startNodeGraph() *authz.NodeGraph {
	g := authz.NewNodeGraph()
	ctx, cancel := context.WithCancel(context.Background())
	a.onUndo(cancel)
	feeds := []interface {
		sync(context.Context) (int64, error)
		resync(context.Context, error) int64
		run(context.Context, int64)
	}{
		&graphFeed[api.Pod]{store: a.Store("", "pods"), log: a.log, replace: g.ReplacePods, set: g.SetPod, delete: g.DeletePod},
		&graphFeed[api.PersistentVolume]{store: a.Store("", "persistentvolumes"), log: a.log, replace: g.ReplacePersistentVolumes,
			set: g.SetPersistentVolume, delete: func(_, name string) { g.DeletePersistentVolume(name) }},
	}
	for _, f := range feeds {
		// The caches are ready: the graph holds what they hold before the
		// server serves, and the watch goes on from there.
		rev, err := f.sync(ctx)
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err != nil {
				rev = f.resync(ctx, err)
			}
			f.run(ctx, rev)
		}()
	}
	return g
}

// graphFeed applies the objects of one watch cache to the graph.
type graphFeed[T any] struct {
	store   *registry.Store
	log     *slog.Logger
	replace func([]*T)
	set     func(*T)
	delete  func(namespace, name string)
}

// sync replaces the graph's objects of the kind by the cache's; it returns
// the revision they are at.
func (f *graphFeed[T]) sync(ctx context.Context) (int64, error) {
	objs, rev, err := f.store.Cacher().List(ctx, cacher.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, err
	}
	vals := make([]*T, 0, len(objs))
	for _, o := range objs {
		if v, ok := o.Decoded().(*T); ok {
			vals = append(vals, v)
		}
	}
	f.replace(vals)
	return rev, nil
}

// run applies the cache's changes after rev until ctx ends, relisting
// whenever the watch ends (the cache restarted or found it too slow).
func (f *graphFeed[T]) run(ctx context.Context, rev int64) {
	for ctx.Err() == nil {
		err := f.watch(ctx, rev)
		// A cache that restarts, or stops with the server, is not ready
		// when it ends its watches: relist once it is back.
		if f.store.Cacher().WaitReady(ctx) != nil {
			return
		}
		rev = f.resync(ctx, err)
	}
}

// resync relists after the watch or a list failed with err, with backoff,
// until a list succeeds or ctx ends.
func (f *graphFeed[T]) resync(ctx context.Context, err error) int64 {
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(backoff):
		}
		f.log.Warn("node authorizer graph relists", "resource", f.store.Info.Resource, "after", err)
		backoff = min(2*backoff, 10*time.Second)
		var rev int64
		if rev, err = f.sync(ctx); err == nil || ctx.Err() != nil {
			return rev
		}
	}
}

// watch applies the changes after rev until the watch or ctx ends.
func (f *graphFeed[T]) watch(ctx context.Context, rev int64) error {
	initial := false
	w, err := f.store.Cacher().Watch(ctx, cacher.WatchOptions{ResourceVersion: strconv.FormatInt(rev, 10), SendInitialEvents: &initial})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-w.Events():
			if !ok {
				return errors.New("the watch ended")
			}
			if err := f.apply(line); err != nil {
				return err
			}
		}
	}
}

// apply applies one watch line ({"type":...,"object":...}).
func (f *graphFeed[T]) apply(line []byte) error {
	var ev struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return fmt.Errorf("decode watch event: %w", err)
	}
	switch ev.Type {
	case "ADDED", "MODIFIED":
		v := new(T)
		if err := json.Unmarshal(ev.Object, v); err != nil {
			return fmt.Errorf("decode watched %s: %w", f.store.Info.Resource, err)
		}
		f.set(v)
	case "DELETED":
		var m struct {
			Metadata api.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(ev.Object, &m); err != nil {
			return fmt.Errorf("decode deleted %s: %w", f.store.Info.Resource, err)
		}
		f.delete(m.Metadata.Namespace, m.Metadata.Name)
	case "ERROR":
		return fmt.Errorf("watch error: %s", ev.Object)
	}
	return nil
}
