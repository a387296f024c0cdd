package pods_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
)

// bindClaim creates a claim and a hostPath volume (DirectoryOrCreate at
// dir) bound to each other, as the PersistentVolume controller leaves
// them.
func (nd *node) bindClaim(name, dir string) {
	nd.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	empty := ""
	rwo := []api.PersistentVolumeAccessMode{api.ReadWriteOnce}
	claims := client.Resource[api.PersistentVolumeClaim](nd.c).Namespace("default")
	c, err := claims.Create(ctx, &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: rwo, StorageClassName: &empty, VolumeName: "pv-" + name,
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}}},
	})
	if err != nil {
		nd.t.Fatal(err)
	}
	c.Status.Phase = api.ClaimBound
	c.Status.AccessModes = rwo
	c.Status.Capacity = api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}
	if _, err := claims.UpdateStatus(ctx, c); err != nil {
		nd.t.Fatal(err)
	}
	t := api.HostPathDirectoryOrCreate
	if _, err := client.Resource[api.PersistentVolume](nd.c).Create(ctx, &api.PersistentVolume{
		ObjectMeta: api.ObjectMeta{Name: "pv-" + name},
		Spec: api.PersistentVolumeSpec{AccessModes: rwo, Capacity: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: dir, Type: &t}},
			ClaimRef:               &api.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "default", Name: name, UID: c.UID}},
	}); err != nil {
		nd.t.Fatal(err)
	}
}

// deletePod deletes the pod and waits until it is gone.
func (nd *node) deletePod(name string) {
	nd.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := nd.pods().Delete(ctx, name, nil); err != nil {
		nd.t.Fatal(err)
	}
	for {
		if _, err := nd.pods().Get(ctx, name); apierrors.IsNotFound(err) {
			return
		}
		if ctx.Err() != nil {
			nd.t.Fatalf("pod %s was not deleted", name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A claim's volume outlives its pod: data written through the claim (and
// through a subPath of it) is on the node in the volume's directory after
// the pod is gone, and the next pod using the claim reads it; that pod's
// claim is readOnly, so it cannot write. A subPath that is a link out of
// the volume is refused, nothing mounted. A pod whose claim is missing
// waits in ContainerCreating with FailedMount, then starts once it exists.
func TestClaimVolumeOutlivesPod(t *testing.T) {
	nd := newNode(t)
	dir := filepath.Join(t.TempDir(), "pvc-data")
	nd.bindClaim("data", dir)

	mount := func(sub, at string) api.VolumeMount {
		return api.VolumeMount{Name: "data", MountPath: at, SubPath: sub}
	}
	claim := func(ro bool) []api.Volume {
		return []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{
			PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "data", ReadOnly: ro}}}}
	}
	w := nd.pod("writer",
		api.Container{Name: "main", Command: sh("echo row1 > /data/row && echo log > /logs/x && ln -sf / /data/esc && sleep 600"),
			VolumeMounts: []api.VolumeMount{mount("", "/data"), mount("logs", "/logs")}})
	w.Spec.Volumes = claim(false)
	nd.create(w)
	got := nd.waitPod("writer", 90*time.Second, "Running", running)
	nd.waitFile(filepath.Join(dir, "row"), "row1", 10*time.Second)
	nd.waitFile(filepath.Join(dir, "logs", "x"), "log", 10*time.Second)
	if out, code := nd.exec(got, "main", "cat", "/data/row"); code != 0 || out != "row1\n" {
		t.Fatalf("cat /data/row: %q (%d)", out, code)
	}
	nd.deletePod("writer")
	if b, err := os.ReadFile(filepath.Join(dir, "row")); err != nil || string(b) != "row1\n" {
		t.Fatalf("the volume's data after its pod's deletion: %q, %v", b, err)
	}

	r := nd.pod("reader",
		api.Container{Name: "main", Command: sh("sleep 600"), VolumeMounts: []api.VolumeMount{mount("", "/data")}},
		api.Container{Name: "escape", Command: sh("sleep 600"), VolumeMounts: []api.VolumeMount{mount("esc", "/host")}})
	r.Spec.Volumes = claim(true)
	nd.create(r)
	got = nd.waitPod("reader", 90*time.Second, "main running, escape refused", func(p *api.Pod) bool {
		wt := status(p, "escape").State.Waiting
		return status(p, "main").State.Running != nil && wt != nil && wt.Reason == "CreateContainerConfigError"
	})
	if out, code := nd.exec(got, "main", "cat", "/data/row"); code != 0 || out != "row1\n" {
		t.Errorf("the next pod reads %q (%d), want row1", out, code)
	}
	if out, code := nd.exec(got, "main", "sh", "-c", "echo x > /data/new"); code == 0 || !strings.Contains(out, "Read-only file system") {
		t.Errorf("write into a readOnly claim: exit %d %q, want a read-only file system", code, out)
	}
	if want := `failed to prepare subPath for volumeMount "data" of container "escape"`; status(got, "escape").State.Waiting.Message != want {
		t.Errorf("escape: %q, want %q", status(got, "escape").State.Waiting.Message, want)
	}

	m := nd.pod("later", api.Container{Name: "main", Command: sh("cat /data/row; sleep 600"), VolumeMounts: []api.VolumeMount{mount("", "/data")}})
	m.Spec.Volumes = []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{
		PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "later"}}}}
	nd.create(m)
	nd.waitEvent("later", `FailedMount: Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/later: failed to fetch PVC from API server: persistentvolumeclaims "later" not found`, 30*time.Second)
	p := nd.waitPod("later", 5*time.Second, "waiting", func(*api.Pod) bool { return true })
	if wt := status(p, "main").State.Waiting; wt == nil || wt.Reason != "ContainerCreating" || p.Status.Phase != api.PodPending {
		t.Fatalf("pod with a missing claim: %s", statusString(p))
	}
	later := filepath.Join(t.TempDir(), "later")
	nd.bindClaim("later", later)
	if err := os.MkdirAll(later, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(later, "row"), []byte("seeded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nd.waitPod("later", 60*time.Second, "Running", running)
}
