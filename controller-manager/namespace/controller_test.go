package namespace

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/informer"
)

func TestSync(t *testing.T) {
	now := api.Now()
	// clienttest drops an object being deleted when it has no
	// metadata.finalizers left; one holds it the way spec.finalizers do.
	terminating := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "ns", DeletionTimestamp: &now, Finalizers: []string{"example.com/hold"}},
		Spec: api.NamespaceSpec{Finalizers: []api.FinalizerName{api.FinalizerKubernetes}}, Status: api.NamespaceStatus{Phase: api.NamespaceTerminating}}
	active := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "ns"}, Spec: api.NamespaceSpec{Finalizers: []api.FinalizerName{api.FinalizerKubernetes}}}
	cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "cm"}}
	heldCM := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "cm", Finalizers: []string{"example.com/hold"}}}
	heldPod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p", Finalizers: []string{"example.com/hold"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	tests := []struct {
		name         string
		objs         []api.Object
		blockDelete  bool // deleteCollection of configmaps deletes nothing, as for one with a finalizer
		blockPods    bool // deleteCollection of pods deletes nothing
		wantWrites   []string
		wantFinalize bool
	}{
		{name: "active namespace untouched", objs: []api.Object{active, cm}},
		// Pods first, then the rest; the deletion conditions are written
		// before the namespace is finalized.
		{name: "empty terminating namespace is finalized", objs: []api.Object{terminating},
			wantWrites: []string{"deletecollection pods ns", "deletecollection configmaps ns", "update namespaces ns/status", "update namespaces ns/finalize"}, wantFinalize: true},
		{name: "content deleted then finalized", objs: []api.Object{terminating, cm},
			wantWrites: []string{"deletecollection pods ns", "deletecollection configmaps ns", "update namespaces ns/status", "update namespaces ns/finalize"}, wantFinalize: true},
		{name: "remaining content waits", objs: []api.Object{terminating, heldCM}, blockDelete: true,
			wantWrites: []string{"deletecollection pods ns", "deletecollection configmaps ns", "update namespaces ns/status"}},
		// A pod left keeps the rest of the content, as kube v1.37's
		// OrderedNamespaceDeletion.
		{name: "remaining pods keep the other content", objs: []api.Object{terminating, heldPod, cm}, blockPods: true,
			wantWrites: []string{"deletecollection pods ns", "update namespaces ns/status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, tt.objs...)
			if tt.blockPods {
				srv.PrependReactor("deletecollection", "pods", func(clienttest.Action) (bool, any, error) {
					return true, &api.Status{Status: api.StatusSuccess}, nil
				})
			}
			if tt.blockDelete {
				srv.PrependReactor("deletecollection", "configmaps", func(clienttest.Action) (bool, any, error) {
					return true, &api.Status{Status: api.StatusSuccess}, nil
				})
			}
			// clienttest has no namespaces/finalize: answer it here and keep
			// what was sent.
			var finalized *api.Namespace
			srv.PrependReactor("update", "namespaces", func(a clienttest.Action) (bool, any, error) {
				if a.Subresource != "finalize" {
					return false, nil, nil
				}
				finalized = &api.Namespace{}
				if err := json.Unmarshal(a.Body, finalized); err != nil {
					return true, nil, err
				}
				return true, finalized, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
			var res []api.ResourceInfo
			for _, r := range []string{"configmaps", "pods"} {
				info, _ := api.LookupResource("", r)
				res = append(res, info)
			}
			c := NewController(srv.Client(), informer.Shared[api.Namespace](f, "", client.ListOptions{}), res, slog.New(slog.DiscardHandler))
			f.Start(ctx)
			f.WaitForCacheSync(ctx)
			srv.ClearActions()
			if err := c.sync(ctx, "ns"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range srv.Actions() {
				if a.Verb != "watch" && a.Verb != "list" && a.Verb != "get" {
					got = append(got, a.String())
				}
			}
			if !slices.Equal(got, tt.wantWrites) {
				t.Fatalf("writes = %q, want %q", got, tt.wantWrites)
			}
			if (finalized != nil) != tt.wantFinalize {
				t.Fatalf("finalized = %v, want %v", finalized != nil, tt.wantFinalize)
			}
			if finalized != nil && slices.Contains(finalized.Spec.Finalizers, api.FinalizerKubernetes) {
				t.Fatalf("finalize kept the kubernetes finalizer: %v", finalized.Spec.Finalizers)
			}
		})
	}
}
