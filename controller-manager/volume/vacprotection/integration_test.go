package vacprotection_test

import (
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/controller-manager/volume/vacprotection"
	"github.com/minik8s/minik8s/internal/client"
)

// TestVACProtection: on a real apiserver and controller-manager, a
// VolumeAttributesClass deleted while a claim names it stays (Terminating,
// its finalizer kept) and goes once the claim does; one nobody names goes
// at once, as the conformance spec "should run through the lifecycle of a
// VolumeAttributesClass" expects within 30 s.
func TestVACProtection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver and the controller-manager")
	}
	cl := controllermanagertest.Start(t, []string{vacprotection.Name, "pvc-protection"}, func(o *app.Options) {})
	cl.Namespace("store")
	ctx := cl.Context(2 * time.Minute)
	classes := client.Resource[api.VolumeAttributesClass](cl.Client)
	claims := client.Resource[api.PersistentVolumeClaim](cl.Client).Namespace("store")
	newClass := func(name string) {
		t.Helper()
		v, err := classes.Create(ctx, &api.VolumeAttributesClass{ObjectMeta: api.ObjectMeta{Name: name},
			DriverName: "example.com/disk", Parameters: map[string]string{"iops": "100"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(v.Finalizers, api.VACProtectionFinalizer) {
			t.Fatalf("class %s created without %s: %v", name, api.VACProtectionFinalizer, v.Finalizers)
		}
	}
	gone := func(name string) {
		t.Helper()
		cl.Eventually(30*time.Second, "VolumeAttributesClass "+name+" deleted", func() (bool, error) {
			_, err := classes.Get(ctx, name)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	}

	newClass("unused")
	if err := classes.Delete(ctx, "unused", nil); err != nil {
		t.Fatal(err)
	}
	gone("unused")

	newClass("gold")
	gold := "gold"
	if _, err := claims.Create(ctx, &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "db", Namespace: "store"},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
			Resources:                 api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeAttributesClassName: &gold}}); err != nil {
		t.Fatal(err)
	}
	if err := classes.Delete(ctx, "gold", nil); err != nil {
		t.Fatal(err)
	}
	// Give the controller time to (wrongly) let it go.
	time.Sleep(2 * time.Second)
	v, err := classes.Get(ctx, "gold")
	if err != nil {
		t.Fatalf("the class a claim names went: %v", err)
	}
	if v.DeletionTimestamp == nil || !slices.Contains(v.Finalizers, api.VACProtectionFinalizer) {
		t.Errorf("the class a claim names: deletionTimestamp %v, finalizers %v", v.DeletionTimestamp, v.Finalizers)
	}
	if err := claims.Delete(ctx, "db", nil); err != nil {
		t.Fatal(err)
	}
	gone("gold")
}
