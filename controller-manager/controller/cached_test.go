package controller

import (
	"log/slog"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/informer"
)

// TestCached reads namespaced and cluster-scoped objects by the keys
// controllers queue; a key of nothing in the cache, or a malformed one,
// reads nil.
func TestCached(t *testing.T) {
	t.Parallel()
	srv := clienttest.NewServer(t,
		&api.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "cm"}},
		&api.Namespace{ObjectMeta: api.ObjectMeta{Name: "ns"}})
	f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	cms := informer.Shared[api.ConfigMap](f, "", client.ListOptions{})
	nss := informer.Shared[api.Namespace](f, "", client.ListOptions{})
	ctx := t.Context()
	f.Start(ctx)
	if !informer.WaitForCacheSync(ctx, cms, nss) {
		t.Fatal("caches did not sync")
	}
	if cm := Cached(cms, "ns/cm"); cm == nil || cm.Name != "cm" {
		t.Errorf("Cached(ns/cm) = %v, want the configmap", cm)
	}
	if ns := Cached(nss, "ns"); ns == nil || ns.Name != "ns" {
		t.Errorf("Cached(ns) = %v, want the namespace", ns)
	}
	for _, key := range []string{"ns/gone", "other/cm", "cm", "a/b/c", ""} {
		if cm := Cached(cms, key); cm != nil {
			t.Errorf("Cached(%q) = %v, want nil", key, cm)
		}
	}
}
