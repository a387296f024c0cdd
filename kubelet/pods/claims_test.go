package pods

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/kubelet/runtime"
)

// claimPod is a pod whose container mounts the claim claimName at /data.
func claimPod(name, claimName string, readOnly bool) *api.Pod {
	p := fakePod(name, api.Container{Name: "main", VolumeMounts: []api.VolumeMount{{Name: "data", MountPath: "/data"}}})
	p.Spec.Volumes = []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{
		PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: claimName, ReadOnly: readOnly}}}}
	return p
}

// addBound stores a claim bound to pv and pv bound to it (uid is the
// claim's uid in pv's claimRef: "" for the stored claim's own).
func addBound(t *testing.T, srv *clienttest.Server, claimName string, pv *api.PersistentVolume, uid api.UID) {
	t.Helper()
	c := &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: claimName, Namespace: "default"},
		Spec:       api.PersistentVolumeClaimSpec{VolumeName: pv.Name},
		Status:     api.PersistentVolumeClaimStatus{Phase: api.ClaimBound},
	}
	if err := srv.Add(c); err != nil {
		t.Fatal(err)
	}
	if !srv.Object(api.ResourceInfo{Resource: "persistentvolumeclaims", Namespaced: true}, "default", claimName, c) {
		t.Fatalf("claim %s not stored", claimName)
	}
	if uid == "" {
		uid = c.UID
	}
	pv.Spec.ClaimRef = &api.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: claimName, UID: uid}
	if err := srv.Add(pv); err != nil {
		t.Fatal(err)
	}
}

func hostPathPV(name, path string) *api.PersistentVolume {
	t := api.HostPathDirectoryOrCreate
	return &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.PersistentVolumeSpec{
		PersistentVolumeSource: api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: path, Type: &t}}}}
}

func localPV(name, path, node string) *api.PersistentVolume {
	return &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.PersistentVolumeSpec{
		PersistentVolumeSource: api.PersistentVolumeSource{Local: &api.LocalVolumeSource{Path: path}},
		NodeAffinity: &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
			MatchExpressions: []api.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: api.NodeSelectorOpIn, Values: []string{node}}}}}}},
	}}
}

// mountOf is the mount at containerPath of the pod's running container
// "main" (ok false when there is none).
func (n *fakeNode) mountOf(pod, containerPath string) (runtime.Mount, bool) {
	c := n.rt.Running(pod, "main")
	if c == nil {
		return runtime.Mount{}, false
	}
	cfg, ok := n.rt.Config(c.ID)
	if !ok {
		return runtime.Mount{}, false
	}
	i := slices.IndexFunc(cfg.Mounts, func(m runtime.Mount) bool { return m.ContainerPath == containerPath })
	if i < 0 {
		return runtime.Mount{}, false
	}
	return cfg.Mounts[i], true
}

// A pod whose claim does not exist never starts: no sandbox, its container
// waits in ContainerCreating and the kubelet reports FailedMount as kube's
// volume manager words it, again and again. Once the claim exists and is
// bound to a hostPath volume, the pod starts with the volume's directory
// (created, as its type DirectoryOrCreate says) mounted.
func TestFakeClaimMissingThenBound(t *testing.T) {
	n := newFakeNode(t, nil)
	n.api.Add(claimPod("db", "data", false))
	want := `Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/data: failed to fetch PVC from API server: persistentvolumeclaims "data" not found`
	n.wait("FailedMount for the missing claim", func() bool { return n.hasEvent(want) })
	p := n.waitPod("db", "ContainerCreating", func(p *api.Pod) bool {
		w := statusOf(p, "main").State.Waiting
		return w != nil && w.Reason == "ContainerCreating"
	})
	if p.Status.Phase != api.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	if acts := n.rt.Actions(); len(acts) > 0 {
		t.Fatalf("runtime actions for a pod whose claim is missing: %q", acts)
	}

	// Unbound: still waiting, with kube's reason.
	pending := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "data", Namespace: "default", UID: "uid-data"},
		Status: api.PersistentVolumeClaimStatus{Phase: api.ClaimPending}}
	if err := n.api.Add(pending); err != nil {
		t.Fatal(err)
	}
	n.wait("FailedMount for the unbound claim", func() bool {
		return n.hasEvent("failed to process volumes=[data]: error processing PVC default/data: PVC is not bound")
	})
	if acts := n.rt.Actions(); len(acts) > 0 {
		t.Fatalf("runtime actions for a pod whose claim is unbound: %q", acts)
	}

	dir := filepath.Join(t.TempDir(), "pvc-data")
	pv := hostPathPV("pv-data", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Resource[api.PersistentVolumeClaim](n.api.Client()).Namespace("default").Delete(ctx, "data", nil); err != nil {
		t.Fatal(err)
	}
	addBound(t, n.api, "data", pv, "")
	n.waitPod("db", "Running", isRunning)
	m, ok := n.mountOf("db", "/data")
	if !ok || m.HostPath != dir || m.ReadOnly {
		t.Errorf("mount of /data: %+v (found %v), want %s read-write", m, ok, dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("the hostPath directory was not created: %v", err)
	}
}

// Bad volumes fail with kube's FailedMount messages, named by the
// PersistentVolume: a local volume whose path is missing, one pinned to
// another node, a volume of a plugin this kubelet lacks, a claim bound to
// a volume that names another claim. None of these pods starts.
func TestFakeClaimVolumeFailures(t *testing.T) {
	missing := localPV("pv-missing", "/nonexistent/minik8s-local", fakeNodeName)
	elsewhere := localPV("pv-elsewhere", t.TempDir(), "node-b")
	nfs := &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv-nfs"}, Spec: api.PersistentVolumeSpec{
		PersistentVolumeSource: api.PersistentVolumeSource{NFS: []byte(`{"server":"nfs","path":"/"}`)}}}
	stolen := hostPathPV("pv-stolen", t.TempDir())
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: fakeNodeName, Labels: map[string]string{"kubernetes.io/hostname": fakeNodeName}},
		Spec: api.NodeSpec{PodCIDR: "10.88.0.0/24"}}
	n := newFakeNode(t, func(n *fakeNode) {
		for _, pv := range []*api.PersistentVolume{missing, elsewhere, nfs} {
			addBound(t, n.api, "c-"+pv.Name, pv, "")
		}
		addBound(t, n.api, "c-"+stolen.Name, stolen, "someone-else")
	}, node)
	for _, pv := range []string{"pv-missing", "pv-elsewhere", "pv-nfs", "pv-stolen"} {
		n.api.Add(claimPod("p-"+pv, "c-"+pv, false))
	}
	for _, want := range []string{
		`Warning FailedMount MountVolume.NewMounter initialization failed for volume "pv-missing" : path "/nonexistent/minik8s-local" does not exist`,
		`Warning FailedMount MountVolume.NodeAffinity check failed for volume "pv-elsewhere" : no matching NodeSelectorTerms`,
		`Warning FailedMount MountVolume.FindPluginBySpec failed for volume "pv-nfs" : no volume plugin matched`,
		`Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC default/c-pv-stolen: found PV object pv-stolen but its pv.Spec.ClaimRef.UID someone-else does not point to claim.UID `,
	} {
		n.wait(want, func() bool { return n.hasEvent(want) })
	}
	if acts := n.rt.Actions(); len(acts) > 0 {
		t.Fatalf("runtime actions for pods whose volumes failed: %q", acts)
	}
}

// A local volume on this node is mounted in place, read-only when the
// pod's claim says so, and given to the pod's fsGroup (unless read-only);
// a claim no container mounts is not even looked up, as in kube.
func TestFakeLocalVolumeReadOnlyAndFSGroup(t *testing.T) {
	rwDir, roDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(rwDir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	rw, ro := localPV("pv-rw", rwDir, fakeNodeName), localPV("pv-ro", roDir, fakeNodeName)
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: fakeNodeName, Labels: map[string]string{"kubernetes.io/hostname": fakeNodeName}},
		Spec: api.NodeSpec{PodCIDR: "10.88.0.0/24"}}
	n := newFakeNode(t, func(n *fakeNode) {
		addBound(t, n.api, "rw", rw, "")
		addBound(t, n.api, "ro", ro, "")
	}, node)

	group := int64(4321)
	p := claimPod("writer", "rw", false)
	p.Spec.SecurityContext = &api.PodSecurityContext{FSGroup: &group}
	// An unused claim that does not exist does not hold the pod back.
	p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: "unused", VolumeSource: api.VolumeSource{
		PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "nothing"}}})
	n.api.Add(p)
	r := claimPod("reader", "ro", true)
	r.Spec.SecurityContext = &api.PodSecurityContext{FSGroup: &group}
	n.api.Add(r)
	n.waitPod("writer", "Running", isRunning)
	n.waitPod("reader", "Running", isRunning)

	if m, ok := n.mountOf("writer", "/data"); !ok || m.HostPath != rwDir || m.ReadOnly {
		t.Errorf("writer's /data: %+v (found %v), want %s read-write", m, ok, rwDir)
	}
	if m, ok := n.mountOf("reader", "/data"); !ok || m.HostPath != roDir || !m.ReadOnly {
		t.Errorf("reader's /data: %+v (found %v), want %s read-only", m, ok, roDir)
	}
	for _, f := range []string{rwDir, filepath.Join(rwDir, "f")} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if gid := st.Sys().(*syscall.Stat_t).Gid; gid != uint32(group) {
			t.Errorf("%s has group %d, want the fsGroup %d", f, gid, group)
		}
	}
	st, err := os.Stat(roDir)
	if err != nil {
		t.Fatal(err)
	}
	if gid := st.Sys().(*syscall.Stat_t).Gid; gid == uint32(group) {
		t.Errorf("the read-only volume %s was given to the fsGroup", roDir)
	}
	for _, e := range n.rec.Events() {
		if strings.Contains(e, "nothing") {
			t.Errorf("the unused claim was looked up: %s", e)
		}
	}
}

// A generic ephemeral volume is the claim POD-VOLUME: while it is missing
// the pod waits as for a missing claim; a claim of that name the pod does
// not control is refused with kube's message (its volume never mounted);
// the pod's own claim, bound, is mounted as a persistentVolumeClaim's.
func TestFakeEphemeralVolume(t *testing.T) {
	n := newFakeNode(t, nil)
	pod := fakePod("db", api.Container{Name: "main", VolumeMounts: []api.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}})
	pod.Spec.Volumes = []api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{
		Ephemeral: []byte(`{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}`)}}}
	if err := n.api.Add(pod); err != nil {
		t.Fatal(err)
	}
	if !n.api.Object(api.ResourceInfo{Resource: "pods", Namespaced: true}, "default", "db", pod) {
		t.Fatal("pod not stored")
	}
	want := `Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[scratch], unattached volumes=[], failed to process volumes=[scratch]: error processing PVC default/db-scratch: failed to fetch PVC from API server: persistentvolumeclaims "db-scratch" not found`
	n.wait("FailedMount for the claim not yet made", func() bool { return n.hasEvent(want) })

	// Someone else's claim of that name, bound: refused.
	addBound(t, n.api, "db-scratch", hostPathPV("pv-other", t.TempDir()), "")
	want = `Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[scratch], unattached volumes=[], failed to process volumes=[scratch]: PVC default/db-scratch was not created for pod default/db (pod is not owner)`
	n.wait("FailedMount for a claim the pod does not own", func() bool { return n.hasEvent(want) })
	if acts := n.rt.Actions(); len(acts) > 0 {
		t.Fatalf("runtime actions for a pod whose ephemeral claim is someone else's: %q", acts)
	}

	// The pod's own claim.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Resource[api.PersistentVolumeClaim](n.api.Client()).Namespace("default").Delete(ctx, "db-scratch", nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "scratch")
	yes := true
	own := &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: "db-scratch", Namespace: "default",
			OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "db", UID: pod.UID, Controller: &yes}}},
		Spec:   api.PersistentVolumeClaimSpec{VolumeName: "pv-own"},
		Status: api.PersistentVolumeClaimStatus{Phase: api.ClaimBound},
	}
	if err := n.api.Add(own); err != nil {
		t.Fatal(err)
	}
	n.api.Object(api.ResourceInfo{Resource: "persistentvolumeclaims", Namespaced: true}, "default", "db-scratch", own)
	pv := hostPathPV("pv-own", dir)
	pv.Spec.ClaimRef = &api.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: "db-scratch", UID: own.UID}
	if err := n.api.Add(pv); err != nil {
		t.Fatal(err)
	}
	n.waitPod("db", "Running", isRunning)
	m, ok := n.mountOf("db", "/scratch")
	if !ok || m.HostPath != dir || m.ReadOnly {
		t.Errorf("mount of /scratch: %+v (found %v), want %s read-write", m, ok, dir)
	}
}
