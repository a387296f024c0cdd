package persistentvolume_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

type env struct {
	*controllermanagertest.Cluster
	ctx     context.Context
	ns      string
	volumes *client.ResourceClient[api.PersistentVolume, *api.PersistentVolume]
	claims  *client.ResourceClient[api.PersistentVolumeClaim, *api.PersistentVolumeClaim]
}

func start(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts an apiserver and the controller-manager")
	}
	// controllermanagertest.Start sets KUBECONFIG: no t.Parallel.
	cl := controllermanagertest.Start(t, []string{"persistentvolume-binder", "pvc-protection", "pv-protection"}, func(o *app.Options) {})
	cl.Namespace("store")
	return &env{Cluster: cl, ctx: cl.Context(2 * time.Minute), ns: "store",
		volumes: client.Resource[api.PersistentVolume](cl.Client),
		claims:  client.Resource[api.PersistentVolumeClaim](cl.Client).Namespace("store")}
}

func quantity(s string) resource.Quantity { return resource.MustParse(s) }

func (e *env) volume(name, size, class string, policy api.PersistentVolumeReclaimPolicy, mutate func(*api.PersistentVolume)) *api.PersistentVolume {
	e.T.Helper()
	pv := &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.PersistentVolumeSpec{
		Capacity:                      api.ResourceList{api.ResourceStorage: quantity(size)},
		AccessModes:                   []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
		PersistentVolumeSource:        api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: "/srv/" + name}},
		PersistentVolumeReclaimPolicy: policy, StorageClassName: class}}
	if mutate != nil {
		mutate(pv)
	}
	out, err := e.volumes.Create(e.ctx, pv)
	if err != nil {
		e.T.Fatal(err)
	}
	return out
}

func (e *env) claim(name, size string, class *string, mutate func(*api.PersistentVolumeClaim)) *api.PersistentVolumeClaim {
	e.T.Helper()
	c := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: name, Namespace: e.ns}, Spec: api.PersistentVolumeClaimSpec{
		AccessModes:      []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
		Resources:        api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: quantity(size)}},
		StorageClassName: class}}
	if mutate != nil {
		mutate(c)
	}
	out, err := e.claims.Create(e.ctx, c)
	if err != nil {
		e.T.Fatal(err)
	}
	return out
}

// waitBound waits until claim is Bound to volume, and the volume Bound to it.
func (e *env) waitBound(claim, volume string) (*api.PersistentVolumeClaim, *api.PersistentVolume) {
	e.T.Helper()
	var pvc *api.PersistentVolumeClaim
	var pv *api.PersistentVolume
	e.Eventually(30*time.Second, fmt.Sprintf("claim %s bound to volume %s", claim, volume), func() (bool, error) {
		var err error
		if pvc, err = e.claims.Get(e.ctx, claim); err != nil {
			return false, err
		}
		if pv, err = e.volumes.Get(e.ctx, volume); err != nil {
			return false, err
		}
		return pvc.Status.Phase == api.ClaimBound && pvc.Spec.VolumeName == volume && pv.Status.Phase == api.VolumeBound &&
			pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == pvc.UID, fmt.Errorf("claim %s %q, volume %s %+v", pvc.Status.Phase, pvc.Spec.VolumeName, pv.Status.Phase, pv.Spec.ClaimRef)
	})
	return pvc, pv
}

// waitAvailable waits until every volume is Available: only Available
// volumes are matched, and a new one is Pending until its first sync.
func (e *env) waitAvailable() {
	e.T.Helper()
	e.Eventually(30*time.Second, "the volumes Available", func() (bool, error) {
		list, err := e.volumes.List(e.ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, v := range list.Items {
			if v.Status.Phase != api.VolumeAvailable {
				return false, fmt.Errorf("%s %s", v.Name, v.Status.Phase)
			}
		}
		return true, nil
	})
}

func (e *env) waitEvent(name, reason, message string) {
	e.T.Helper()
	e.Eventually(30*time.Second, fmt.Sprintf("event %s %q on %s", reason, message, name), func() (bool, error) {
		list, err := client.Resource[api.Event](e.Client).Namespace("").List(e.ctx, client.ListOptions{})
		if err != nil {
			return false, err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name == name {
				if ev.Reason == reason && ev.Message == message {
					if ev.Source.Component != "persistentvolume-controller" {
						return false, fmt.Errorf("event from %q", ev.Source.Component)
					}
					return true, nil
				}
				seen = append(seen, ev.Reason+": "+ev.Message)
			}
		}
		return false, fmt.Errorf("events of %s: %q", name, seen)
	})
}

func ptr[T any](v T) *T { return &v }

// TestIntegrationBind: a claim gets the smallest matching volume of its
// class (not a bigger one, not one of another class, not a ReadWriteMany
// one when a ReadWriteOnce one fits), with kube's annotations and status;
// a claim naming a volume (spec.volumeName) and a volume naming a claim
// (claimRef) are bound to each other and nothing else; a claim nothing
// fits stays Pending with FailedBinding.
func TestIntegrationBind(t *testing.T) {
	e := start(t)
	e.volume("big", "10Gi", "", api.PersistentVolumeReclaimRetain, nil)
	e.volume("small", "2Gi", "", api.PersistentVolumeReclaimRetain, nil)
	e.volume("tiny", "500Mi", "", api.PersistentVolumeReclaimRetain, nil)
	e.volume("other-class", "2Gi", "gold", api.PersistentVolumeReclaimRetain, nil)
	e.volume("rwx", "2Gi", "", api.PersistentVolumeReclaimRetain, func(pv *api.PersistentVolume) {
		pv.Spec.AccessModes = []api.PersistentVolumeAccessMode{api.ReadWriteOnce, api.ReadWriteMany}
	})
	e.volume("wanted", "1Gi", "", api.PersistentVolumeReclaimRetain, nil)
	e.volume("reserved", "1Gi", "", api.PersistentVolumeReclaimRetain, func(pv *api.PersistentVolume) {
		pv.Spec.ClaimRef = &api.ObjectReference{Namespace: "store", Name: "owner"}
	})
	e.waitAvailable()

	e.claim("data", "1500Mi", ptr(""), nil)
	pvc, pv := e.waitBound("data", "small")
	if pvc.Annotations[storagevolume.AnnBindCompleted] != "yes" || pvc.Annotations[storagevolume.AnnBoundByController] != "yes" {
		t.Errorf("claim annotations %v", pvc.Annotations)
	}
	if pv.Annotations[storagevolume.AnnBoundByController] != "yes" {
		t.Errorf("volume annotations %v", pv.Annotations)
	}
	if q := pvc.Status.Capacity[api.ResourceStorage]; q.Cmp(quantity("2Gi")) != 0 || !slices.Equal(pvc.Status.AccessModes, []api.PersistentVolumeAccessMode{api.ReadWriteOnce}) {
		t.Errorf("claim status %+v", pvc.Status)
	}
	if pv.Status.LastPhaseTransitionTime == nil {
		t.Errorf("volume status %+v: no lastPhaseTransitionTime", pv.Status)
	}
	if ref := pv.Spec.ClaimRef; ref.Kind != "PersistentVolumeClaim" || ref.APIVersion != "v1" || ref.Namespace != "store" || ref.Name != "data" {
		t.Errorf("claimRef %+v", ref)
	}
	if !slices.Contains(pvc.Finalizers, api.PVCProtectionFinalizer) || !slices.Contains(pv.Finalizers, api.PVProtectionFinalizer) {
		t.Errorf("finalizers: claim %v, volume %v", pvc.Finalizers, pv.Finalizers)
	}

	// Pre-binding by the claim: the named volume, though a smaller one fits.
	e.claim("named", "100Mi", ptr(""), func(c *api.PersistentVolumeClaim) { c.Spec.VolumeName = "wanted" })
	pvc, pv = e.waitBound("named", "wanted")
	if _, ok := pvc.Annotations[storagevolume.AnnBoundByController]; ok {
		t.Errorf("a claim the user bound got %v", pvc.Annotations)
	}
	if _, ok := pv.Annotations[storagevolume.AnnBoundByController]; !ok {
		t.Errorf("a volume the controller bound got %v", pv.Annotations)
	}
	// Pre-binding by the volume: its claim, and only it, gets it.
	e.claim("owner", "1Gi", ptr(""), nil)
	_, pv = e.waitBound("owner", "reserved")
	if _, ok := pv.Annotations[storagevolume.AnnBoundByController]; ok {
		t.Errorf("a volume the user pre-bound got %v", pv.Annotations)
	}

	// Nothing fits: Pending, with kube's event.
	e.claim("huge", "100Gi", ptr(""), nil)
	e.waitEvent("huge", "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
	if c, err := e.claims.Get(e.ctx, "huge"); err != nil || c.Status.Phase != api.ClaimPending || c.Spec.VolumeName != "" {
		t.Fatalf("huge: %+v %v", c, err)
	}
	// A named volume that does not fit: VolumeMismatch.
	e.claim("mismatch", "1Gi", ptr(""), func(c *api.PersistentVolumeClaim) { c.Spec.VolumeName = "tiny" })
	e.waitEvent("mismatch", "VolumeMismatch", `Cannot bind to requested volume "tiny": requested PV is too small`)
	// A claim of the RWO+RWX volume's access modes takes it.
	e.claim("shared", "1Gi", ptr(""), func(c *api.PersistentVolumeClaim) {
		c.Spec.AccessModes = []api.PersistentVolumeAccessMode{api.ReadWriteMany}
	})
	e.waitBound("shared", "rwx")
	if v, err := e.volumes.Get(e.ctx, "big"); err != nil || v.Status.Phase != api.VolumeAvailable || v.Spec.ClaimRef != nil {
		t.Fatalf("big: %+v %v", v, err)
	}
}

// TestIntegrationReclaim: deleting a bound claim with a Retain volume
// releases the volume (Released, claimRef kept); a Delete volume no one
// can delete (a hostPath outside /tmp) is Failed with kube's event; a
// Delete volume an external provisioner made is left to it (Released); a
// hostPath under /tmp is deleted; Recycle is refused.
func TestIntegrationReclaim(t *testing.T) {
	e := start(t)
	e.volume("kept", "1Gi", "a", api.PersistentVolumeReclaimRetain, nil)
	e.volume("stuck", "1Gi", "b", api.PersistentVolumeReclaimDelete, nil)
	e.volume("external", "1Gi", "c", api.PersistentVolumeReclaimDelete, func(pv *api.PersistentVolume) {
		pv.Annotations = map[string]string{storagevolume.AnnDynamicallyProvisioned: "rancher.io/local-path"}
	})
	e.volume("scratch", "1Gi", "d", api.PersistentVolumeReclaimDelete, func(pv *api.PersistentVolume) { pv.Spec.HostPath.Path = "/tmp/scratch" })
	e.volume("recycled", "1Gi", "e", api.PersistentVolumeReclaimRecycle, nil)
	e.waitAvailable()
	for name, class := range map[string]string{"kept": "a", "stuck": "b", "external": "c", "scratch": "d", "recycled": "e"} {
		e.claim(name, "1Gi", ptr(class), nil)
	}
	for _, name := range []string{"kept", "stuck", "external", "scratch", "recycled"} {
		e.waitBound(name, name)
		if err := e.claims.Delete(e.ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	phase := func(name string, want api.PersistentVolumePhase) *api.PersistentVolume {
		t.Helper()
		var pv *api.PersistentVolume
		e.Eventually(30*time.Second, "volume "+name+" "+string(want), func() (bool, error) {
			var err error
			pv, err = e.volumes.Get(e.ctx, name)
			if err != nil {
				return false, err
			}
			return pv.Status.Phase == want, fmt.Errorf("phase %s", pv.Status.Phase)
		})
		return pv
	}
	if pv := phase("kept", api.VolumeReleased); pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "kept" {
		t.Errorf("released volume lost its claimRef: %+v", pv.Spec.ClaimRef)
	}
	phase("stuck", api.VolumeFailed)
	e.waitEvent("stuck", "VolumeFailedDelete", "host_path deleter only supports /tmp/.+ but received provided /srv/stuck")
	phase("external", api.VolumeReleased)
	phase("recycled", api.VolumeFailed)
	e.waitEvent("recycled", "VolumeFailedRecycle", "Recycle failed: minik8s runs no recycler pods (the Recycle reclaim policy is deprecated: use Delete or Retain)")
	e.Eventually(30*time.Second, "the /tmp hostPath volume deleted", func() (bool, error) {
		_, err := e.volumes.Get(e.ctx, "scratch")
		return apierrors.IsNotFound(err), err
	})
	// A released Retain volume stays Released a while (no re-binding).
	time.Sleep(time.Second)
	if pv := phase("kept", api.VolumeReleased); pv.Spec.ClaimRef == nil {
		t.Fatal("released volume unbound")
	}
}

// TestIntegrationProtection: a claim used by a running pod outlives its
// deletion (terminating, finalizer kept) until the pod is gone; its bound
// volume, deleted, waits until it is no longer Bound.
func TestIntegrationProtection(t *testing.T) {
	e := start(t)
	e.volume("vol", "1Gi", "", api.PersistentVolumeReclaimRetain, nil)
	e.waitAvailable()
	e.claim("data", "1Gi", ptr(""), nil)
	e.waitBound("data", "vol")
	pods := client.Resource[api.Pod](e.Client).Namespace(e.ns)
	if _, err := pods.Create(e.ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "db", Namespace: e.ns}, Spec: api.PodSpec{
		NodeName:   "node-a",
		Containers: []api.Container{{Name: "c", Image: "busybox"}},
		Volumes: []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{
			PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := e.claims.Delete(e.ctx, "data", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.volumes.Delete(e.ctx, "vol", nil); err != nil {
		t.Fatal(err)
	}
	// The claim and the volume stay, terminating, while the pod runs.
	time.Sleep(2 * time.Second)
	c, err := e.claims.Get(e.ctx, "data")
	if err != nil || c.DeletionTimestamp == nil || !slices.Contains(c.Finalizers, api.PVCProtectionFinalizer) {
		t.Fatalf("claim in use: %+v %v", c, err)
	}
	v, err := e.volumes.Get(e.ctx, "vol")
	if err != nil || v.DeletionTimestamp == nil || v.Status.Phase != api.VolumeBound || !slices.Contains(v.Finalizers, api.PVProtectionFinalizer) {
		t.Fatalf("volume in use: %+v %v", v, err)
	}
	zero := int64(0)
	if err := pods.Delete(e.ctx, "db", &api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.Eventually(30*time.Second, "the claim, then the volume, gone", func() (bool, error) {
		_, errc := e.claims.Get(e.ctx, "data")
		_, errv := e.volumes.Get(e.ctx, "vol")
		return apierrors.IsNotFound(errc) && apierrors.IsNotFound(errv), fmt.Errorf("claim: %v, volume: %v", errc, errv)
	})
}

// TestIntegrationProvisioning: a claim without a class gets the default
// class retroactively once one exists; a claim of an Immediate class with
// an external provisioner is annotated for it, with the ExternalProvisioning
// event, and the volume the provisioner creates pre-bound to it is bound;
// a WaitForFirstConsumer claim waits (event) until a volume pre-bound by
// the scheduler appears.
func TestIntegrationProvisioning(t *testing.T) {
	e := start(t)
	classes := client.Resource[api.StorageClass](e.Client)
	e.claim("classless", "1Gi", nil, nil)
	immediate, wffc := api.VolumeBindingImmediate, api.VolumeBindingWaitForFirstConsumer
	if _, err := classes.Create(e.ctx, &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: "local-path",
		Annotations: map[string]string{api.IsDefaultStorageClassAnnotation: "true"}},
		Provisioner: "rancher.io/local-path", VolumeBindingMode: &wffc}); err != nil {
		t.Fatal(err)
	}
	if _, err := classes.Create(e.ctx, &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: "fast"},
		Provisioner: "example.com/fast", VolumeBindingMode: &immediate}); err != nil {
		t.Fatal(err)
	}
	// The class is assigned within a resync.
	e.Eventually(40*time.Second, "the default class assigned to the claim created before it", func() (bool, error) {
		c, err := e.claims.Get(e.ctx, "classless")
		if err != nil {
			return false, err
		}
		return c.Spec.StorageClassName != nil && *c.Spec.StorageClassName == "local-path", fmt.Errorf("class %v", c.Spec.StorageClassName)
	})
	e.waitEvent("classless", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")

	claim := e.claim("fast", "1Gi", ptr("fast"), nil)
	e.waitEvent("fast", "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner 'example.com/fast' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.")
	c, err := e.claims.Get(e.ctx, "fast")
	if err != nil || c.Annotations[storagevolume.AnnStorageProvisioner] != "example.com/fast" || c.Annotations[storagevolume.AnnBetaStorageProvisioner] != "example.com/fast" {
		t.Fatalf("claim annotations %v (%v)", c.Annotations, err)
	}
	// The provisioner's volume, pre-bound to the claim.
	e.volume("pvc-"+string(claim.UID), "1Gi", "fast", api.PersistentVolumeReclaimDelete, func(pv *api.PersistentVolume) {
		pv.Annotations = map[string]string{storagevolume.AnnDynamicallyProvisioned: "example.com/fast"}
		pv.Spec.ClaimRef = storagevolume.ClaimRef(claim)
	})
	e.waitBound("fast", "pvc-"+string(claim.UID))

	// The scheduler's part for a WaitForFirstConsumer claim: a volume
	// pre-bound (claimRef with the uid) and bound-by-controller.
	c, err = e.claims.Get(e.ctx, "classless")
	if err != nil {
		t.Fatal(err)
	}
	e.volume("local-a", "5Gi", "local-path", api.PersistentVolumeReclaimRetain, func(pv *api.PersistentVolume) {
		pv.Annotations = map[string]string{storagevolume.AnnBoundByController: "yes"}
		pv.Spec.ClaimRef = storagevolume.ClaimRef(c)
	})
	e.waitBound("classless", "local-a")

	// Provisioning on the node the scheduler chose: no provisioner asked
	// before the selected-node annotation, asked after it.
	e.claim("wffc", "1Gi", ptr("local-path"), nil)
	e.waitEvent("wffc", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
	if c, err := e.claims.Get(e.ctx, "wffc"); err != nil || c.Annotations[storagevolume.AnnStorageProvisioner] != "" {
		t.Fatalf("a claim waiting for its first consumer: %v (%v)", c.Annotations, err)
	}
	e.Eventually(30*time.Second, "the selected node set", func() (bool, error) {
		c, err := e.claims.Get(e.ctx, "wffc")
		if err != nil {
			return false, err
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[storagevolume.AnnSelectedNode] = "node-a"
		_, err = e.claims.Update(e.ctx, c)
		return err == nil, err
	})
	e.waitEvent("wffc", "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' "+
		"or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.")
	c, err = e.claims.Get(e.ctx, "wffc")
	if err != nil || c.Annotations[storagevolume.AnnStorageProvisioner] != "rancher.io/local-path" {
		t.Fatalf("claim annotations %v (%v)", c.Annotations, err)
	}
	e.volume("pvc-"+string(c.UID), "1Gi", "local-path", api.PersistentVolumeReclaimDelete, func(pv *api.PersistentVolume) {
		pv.Annotations = map[string]string{storagevolume.AnnDynamicallyProvisioned: "rancher.io/local-path"}
		pv.Spec.ClaimRef = storagevolume.ClaimRef(c)
	})
	e.waitBound("wffc", "pvc-"+string(c.UID))
}
