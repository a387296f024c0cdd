package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
)

// TestSetFinalizer: an update only when the finalizer must change, the
// other finalizers kept, and a claim deleted meanwhile is no error.
func TestSetFinalizer(t *testing.T) {
	const f = api.PVCProtectionFinalizer
	claim := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "c", Finalizers: []string{"other"}}}
	srv := clienttest.NewServer(t, claim)
	rc := client.Resource[api.PersistentVolumeClaim](srv.Client()).Namespace("ns")
	ctx := context.Background()
	stored := func() []string {
		var got api.PersistentVolumeClaim
		info, _ := client.InfoFor[api.PersistentVolumeClaim]()
		if !srv.Object(info, "ns", "c", &got) {
			t.Fatal("the claim is gone")
		}
		return got.Finalizers
	}

	if err := SetFinalizer(ctx, rc, claim, f, true); err != nil {
		t.Fatal(err)
	}
	if got := stored(); !slices.Equal(got, []string{"other", f}) {
		t.Errorf("after the add: %v", got)
	}
	withIt := api.DeepCopy(claim)
	withIt.Finalizers = stored()
	srv.ClearActions()
	if err := SetFinalizer(ctx, rc, withIt, f, true); err != nil {
		t.Fatal(err)
	}
	if a := srv.Actions(); len(a) != 0 {
		t.Errorf("adding a finalizer already there sent %v", a)
	}
	if err := SetFinalizer(ctx, rc, withIt, f, false); err != nil {
		t.Fatal(err)
	}
	if got := stored(); !slices.Equal(got, []string{"other"}) {
		t.Errorf("after the removal: %v", got)
	}
	if a := fmt.Sprint(srv.Actions()); a != "[update persistentvolumeclaims ns/c]" {
		t.Errorf("requests: %s", a)
	}
	gone := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "gone"}}
	if err := SetFinalizer(ctx, rc, gone, f, true); err != nil {
		t.Errorf("a claim gone meanwhile: %v", err)
	}
}

// TestProtectionPredicates: a finalizer is added only to objects not being
// deleted, and an object being deleted is a candidate only while it holds
// the finalizer.
func TestProtectionPredicates(t *testing.T) {
	const f = api.PVProtectionFinalizer
	now := api.Now()
	for _, tc := range []struct {
		meta              api.ObjectMeta
		needs, candidates bool
	}{
		{api.ObjectMeta{}, true, false},
		{api.ObjectMeta{Finalizers: []string{f}}, false, false},
		{api.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{f}}, false, true},
		{api.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{"other"}}, false, false},
	} {
		if got := NeedsFinalizer(&tc.meta, f); got != tc.needs {
			t.Errorf("NeedsFinalizer(%+v) = %v", tc.meta, got)
		}
		if got := IsDeletionCandidate(&tc.meta, f); got != tc.candidates {
			t.Errorf("IsDeletionCandidate(%+v) = %v", tc.meta, got)
		}
	}
}
