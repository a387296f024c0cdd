package localpath_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

const root = "/var/lib/test-storage"

// start runs the provisioner alone against a fresh apiserver, with a node
// node-a, the local-path class and the kube-system service account the
// helper pods run as.
func start(t *testing.T) *controllermanagertest.Cluster {
	t.Helper()
	cl := controllermanagertest.Start(t, []string{"local-path-provisioner"}, func(o *app.Options) {
		o.Controller.LocalPathRoot = root
		o.Controller.LocalPathHelperImage = "minik8s/busybox:test"
	})
	ctx := cl.Context(10 * time.Second)
	if _, err := client.Resource[api.Node](cl.Client).Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-a",
		Labels: map[string]string{"kubernetes.io/hostname": "node-a"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.ServiceAccount](cl.Client).Namespace("kube-system").Create(ctx,
		&api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "default", Namespace: "kube-system"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	class(t, cl, "local-path", api.VolumeBindingWaitForFirstConsumer)
	return cl
}

func class(t *testing.T, cl *controllermanagertest.Cluster, name string, mode api.VolumeBindingMode) {
	t.Helper()
	del := api.PersistentVolumeReclaimDelete
	if _, err := client.Resource[api.StorageClass](cl.Client).Create(cl.Context(10*time.Second), &api.StorageClass{
		ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: "rancher.io/local-path", ReclaimPolicy: &del, VolumeBindingMode: &mode,
	}); err != nil {
		t.Fatal(err)
	}
}

// claim creates a claim of class annotated for the provisioner (as the
// PersistentVolume controller does) and for node (as the scheduler does;
// "" for none).
func claim(t *testing.T, cl *controllermanagertest.Cluster, name, class, node string, modes ...api.PersistentVolumeAccessMode) *api.PersistentVolumeClaim {
	t.Helper()
	if len(modes) == 0 {
		modes = []api.PersistentVolumeAccessMode{api.ReadWriteOnce}
	}
	ann := map[string]string{"volume.kubernetes.io/storage-provisioner": "rancher.io/local-path"}
	if node != "" {
		ann["volume.kubernetes.io/selected-node"] = node
	}
	c, err := client.Resource[api.PersistentVolumeClaim](cl.Client).Namespace("default").Create(cl.Context(10*time.Second), &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: modes, StorageClassName: &class,
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("2Gi")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// helperPod waits for the helper pod name in kube-system.
func helperPod(t *testing.T, cl *controllermanagertest.Cluster, name string) *api.Pod {
	t.Helper()
	var p *api.Pod
	cl.Eventually(10*time.Second, "helper pod "+name, func() (bool, error) {
		var err error
		p, err = client.Resource[api.Pod](cl.Client).Namespace("kube-system").Get(cl.Context(5*time.Second), name)
		return err == nil, err
	})
	return p
}

// finish ends the helper pod in phase as its kubelet would report it.
func finish(t *testing.T, cl *controllermanagertest.Cluster, p *api.Pod, phase api.PodPhase, code int32) {
	t.Helper()
	p.Status.Phase = phase
	p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "helper-pod", Image: p.Spec.Containers[0].Image,
		State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: code}}}}
	if _, err := client.Resource[api.Pod](cl.Client).Namespace("kube-system").UpdateStatus(cl.Context(10*time.Second), p); err != nil {
		t.Fatal(err)
	}
}

// gone waits until the helper pod is deleted.
func gone(t *testing.T, cl *controllermanagertest.Cluster, name string) {
	t.Helper()
	cl.Eventually(10*time.Second, "helper pod "+name+" deleted", func() (bool, error) {
		_, err := client.Resource[api.Pod](cl.Client).Namespace("kube-system").Get(cl.Context(5*time.Second), name)
		return apierrors.IsNotFound(err), err
	})
}

// events are the "REASON: message" events of the object name.
func events(t *testing.T, cl *controllermanagertest.Cluster, ns, name string) []string {
	t.Helper()
	l, err := client.Resource[api.Event](cl.Client).Namespace(ns).List(cl.Context(5*time.Second), client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Name == name {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

func waitEvent(t *testing.T, cl *controllermanagertest.Cluster, ns, name, want string) {
	t.Helper()
	cl.Eventually(10*time.Second, fmt.Sprintf("event %q on %s", want, name), func() (bool, error) {
		return slices.Contains(events(t, cl, ns, name), want), fmt.Errorf("events: %q", events(t, cl, ns, name))
	})
}

func envOf(c api.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// A claim annotated for the provisioner and a node gets a helper pod on
// that node creating ROOT/pvc-UID_NAMESPACE_NAME; once it succeeded, the
// PersistentVolume pvc-UID exists with rancher's and external-provisioner's
// fields, the events say so, and the helper pod is gone.
func TestProvisionClaim(t *testing.T) {
	cl := start(t)
	c := claim(t, cl, "data", "local-path", "node-a")
	pvName := "pvc-" + string(c.UID)
	dir := filepath.Join(root, pvName+"_default_data")

	p := helperPod(t, cl, "helper-pod-create-"+pvName)
	hc := p.Spec.Containers[0]
	if p.Spec.NodeName != "node-a" || p.Spec.RestartPolicy != api.RestartPolicyNever || hc.Image != "minik8s/busybox:test" ||
		p.Spec.PriorityClassName != "system-node-critical" || p.Annotations["local.path.provisioner/helper-for"] != "claim:default/data" ||
		hc.ImagePullPolicy != api.PullIfNotPresent || envOf(hc, "VOL_DIR") != dir || envOf(hc, "VOL_SIZE_BYTES") != "2147483648" ||
		!slices.Equal(hc.Command, []string{"sh", "-c", "set -eu\nmkdir -m 0777 -p \"$VOL_DIR\"\n"}) {
		t.Fatalf("helper pod: node %q restart %q container %+v", p.Spec.NodeName, p.Spec.RestartPolicy, hc)
	}
	if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].HostPath == nil || p.Spec.Volumes[0].HostPath.Path != root ||
		len(hc.VolumeMounts) != 1 || hc.VolumeMounts[0].MountPath != root {
		t.Fatalf("helper pod mounts: volumes %+v mounts %+v, want %s from the host at %s", p.Spec.Volumes, hc.VolumeMounts, root, root)
	}
	waitEvent(t, cl, "default", "data", `Provisioning: External provisioner is provisioning volume for claim "default/data"`)
	time.Sleep(300 * time.Millisecond)
	if _, err := client.Resource[api.PersistentVolume](cl.Client).Get(cl.Context(5*time.Second), pvName); !apierrors.IsNotFound(err) {
		t.Fatalf("volume before its directory exists: %v", err)
	}

	finish(t, cl, p, api.PodSucceeded, 0)
	var pv *api.PersistentVolume
	cl.Eventually(10*time.Second, "volume "+pvName, func() (bool, error) {
		var err error
		pv, err = client.Resource[api.PersistentVolume](cl.Client).Get(cl.Context(5*time.Second), pvName)
		return err == nil, err
	})
	s := pv.Spec
	if s.HostPath == nil || s.HostPath.Path != dir || s.HostPath.Type == nil || *s.HostPath.Type != api.HostPathDirectoryOrCreate {
		t.Errorf("hostPath %+v, want %s DirectoryOrCreate", s.HostPath, dir)
	}
	if pv.Annotations["pv.kubernetes.io/provisioned-by"] != "rancher.io/local-path" || pv.Annotations["local.path.provisioner/selected-node"] != "node-a" {
		t.Errorf("annotations %v", pv.Annotations)
	}
	if s.ClaimRef == nil || s.ClaimRef.Name != "data" || s.ClaimRef.Namespace != "default" || s.ClaimRef.UID != c.UID {
		t.Errorf("claimRef %+v", s.ClaimRef)
	}
	q := s.Capacity[api.ResourceStorage]
	if q.String() != "2Gi" || !slices.Equal(s.AccessModes, []api.PersistentVolumeAccessMode{api.ReadWriteOnce}) ||
		s.PersistentVolumeReclaimPolicy != api.PersistentVolumeReclaimDelete || s.StorageClassName != "local-path" ||
		s.VolumeMode == nil || *s.VolumeMode != api.PersistentVolumeFilesystem {
		t.Errorf("capacity %s, access modes %v, reclaim %s, class %q, mode %v", q.String(), s.AccessModes, s.PersistentVolumeReclaimPolicy, s.StorageClassName, s.VolumeMode)
	}
	if na := s.NodeAffinity; na == nil || na.Required == nil || len(na.Required.NodeSelectorTerms) != 1 ||
		fmt.Sprint(na.Required.NodeSelectorTerms[0].MatchExpressions) != fmt.Sprint([]api.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: api.NodeSelectorOpIn, Values: []string{"node-a"}}}) {
		t.Errorf("node affinity %+v", na)
	}
	waitEvent(t, cl, "default", "data", "ProvisioningSucceeded: Successfully provisioned volume "+pvName)
	gone(t, cl, p.Name)
}

// A Released volume the provisioner made, with reclaim policy Delete, gets
// a helper pod on its node removing its directory, and is deleted once
// that pod succeeded; one that failed is reported (VolumeFailedDelete)
// and retried with a new pod. A Retain volume is left alone.
func TestDeleteReleasedVolume(t *testing.T) {
	cl := start(t)
	pvs := client.Resource[api.PersistentVolume](cl.Client)
	mk := func(name string, reclaim api.PersistentVolumeReclaimPolicy) {
		dirOrCreate := api.HostPathDirectoryOrCreate
		pv, err := pvs.Create(cl.Context(10*time.Second), &api.PersistentVolume{
			ObjectMeta: api.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}},
			Spec: api.PersistentVolumeSpec{
				AccessModes: []api.PersistentVolumeAccessMode{api.ReadWriteOnce}, PersistentVolumeReclaimPolicy: reclaim,
				Capacity:               api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource: api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: root + "/" + name + "_default_gone", Type: &dirOrCreate}},
				NodeAffinity: &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{MatchExpressions: []api.NodeSelectorRequirement{
					{Key: "kubernetes.io/hostname", Operator: api.NodeSelectorOpIn, Values: []string{"node-a"}}}}}}},
				ClaimRef: &api.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: "gone", UID: "0000"},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		pv.Status.Phase = api.VolumeReleased
		if _, err := pvs.UpdateStatus(cl.Context(10*time.Second), pv); err != nil {
			t.Fatal(err)
		}
	}
	mk("pvc-retained", api.PersistentVolumeReclaimRetain)
	mk("pvc-released", api.PersistentVolumeReclaimDelete)

	p := helperPod(t, cl, "helper-pod-delete-pvc-released")
	hc := p.Spec.Containers[0]
	if p.Spec.NodeName != "node-a" || envOf(hc, "VOL_DIR") != root+"/pvc-released_default_gone" ||
		!slices.Equal(hc.Command, []string{"sh", "-c", "set -eu\nrm -rf \"$VOL_DIR\"\n"}) ||
		len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].HostPath.Path != root {
		t.Fatalf("delete helper pod: node %q container %+v volumes %+v", p.Spec.NodeName, hc, p.Spec.Volumes)
	}
	finish(t, cl, p, api.PodFailed, 1)
	waitEvent(t, cl, "default", "pvc-released",
		"VolumeFailedDelete: failed to delete volume pvc-released: helper pod kube-system/helper-pod-delete-pvc-released failed: exit code 1")
	if _, err := pvs.Get(cl.Context(5*time.Second), "pvc-released"); err != nil {
		t.Fatalf("volume deleted although its directory was not: %v", err)
	}
	// The retry runs a new helper pod.
	var retry *api.Pod
	cl.Eventually(10*time.Second, "a new delete helper pod", func() (bool, error) {
		p2, err := client.Resource[api.Pod](cl.Client).Namespace("kube-system").Get(cl.Context(5*time.Second), p.Name)
		if err != nil || p2.UID == p.UID {
			return false, err
		}
		retry = p2
		return true, nil
	})
	finish(t, cl, retry, api.PodSucceeded, 0)
	// Deleted: gone, or held by the pv-protection finalizer (whose
	// controller is not running here).
	cl.Eventually(10*time.Second, "volume pvc-released deleted", func() (bool, error) {
		pv, err := pvs.Get(cl.Context(5*time.Second), "pvc-released")
		if err == nil {
			return pv.DeletionTimestamp != nil, fmt.Errorf("finalizers %v", pv.Finalizers)
		}
		return apierrors.IsNotFound(err), err
	})
	gone(t, cl, p.Name)
	if _, err := pvs.Get(cl.Context(5*time.Second), "pvc-retained"); err != nil {
		t.Errorf("the Retain volume: %v", err)
	}
	if _, err := client.Resource[api.Pod](cl.Client).Namespace("kube-system").Get(cl.Context(5*time.Second), "helper-pod-delete-pvc-retained"); !apierrors.IsNotFound(err) {
		t.Errorf("a helper pod for the Retain volume: %v", err)
	}
}

// What cannot be provisioned is not: a WaitForFirstConsumer claim before
// the scheduler chose a node (no pod, no event), a claim of an Immediate
// class (no node to put it on), a ReadWriteMany claim, a claim whose
// selected node does not exist (the annotation is removed for the
// scheduler to choose again) and one whose helper pod failed — each with
// external-provisioner's ProvisioningFailed, and no volume.
func TestProvisioningBadInput(t *testing.T) {
	cl := start(t)
	class(t, cl, "local-path-now", api.VolumeBindingImmediate)
	waiting := claim(t, cl, "waiting", "local-path", "")
	claim(t, cl, "now", "local-path-now", "")
	claim(t, cl, "shared", "local-path", "node-a", api.ReadWriteMany)
	lost := claim(t, cl, "lost", "local-path", "node-gone")
	failing := claim(t, cl, "failing", "local-path", "node-a")

	waitEvent(t, cl, "default", "now", `ProvisioningFailed: failed to provision volume with StorageClass "local-path-now": configuration error, no node was specified`)
	waitEvent(t, cl, "default", "shared", `ProvisioningFailed: failed to provision volume with StorageClass "local-path": NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes`)
	waitEvent(t, cl, "default", "lost", `ProvisioningFailed: nodes "node-gone" not found`)
	cl.Eventually(10*time.Second, "selected-node removed from claim lost", func() (bool, error) {
		c, err := client.Resource[api.PersistentVolumeClaim](cl.Client).Namespace("default").Get(cl.Context(5*time.Second), "lost")
		if err != nil {
			return false, err
		}
		_, ok := c.Annotations["volume.kubernetes.io/selected-node"]
		return !ok, nil
	})
	p := helperPod(t, cl, "helper-pod-create-pvc-"+string(failing.UID))
	finish(t, cl, p, api.PodFailed, 2)
	waitEvent(t, cl, "default", "failing", fmt.Sprintf(`ProvisioningFailed: failed to provision volume with StorageClass "local-path": failed to create volume pvc-%s: helper pod kube-system/%s failed: exit code 2`, failing.UID, p.Name))

	if ev := events(t, cl, "default", "waiting"); len(ev) > 0 {
		t.Errorf("events for a claim waiting for its first consumer: %q", ev)
	}
	l, err := client.Resource[api.PersistentVolume](cl.Client).List(cl.Context(5*time.Second), client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range l.Items {
		t.Errorf("volume %s provisioned", pv.Name)
	}
	pods, err := client.Resource[api.Pod](cl.Client).Namespace("kube-system").List(cl.Context(5*time.Second), client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, hp := range pods.Items {
		for _, c := range []*api.PersistentVolumeClaim{waiting, lost} {
			if strings.Contains(hp.Name, string(c.UID)) {
				t.Errorf("helper pod %s for claim %s", hp.Name, c.Name)
			}
		}
	}
}

// The whole protocol with the PersistentVolume controller: a claim of the
// default local-path class the scheduler gave a node is handed to the
// provisioner by the PV controller, provisioned, and bound; once the claim
// is deleted its volume is Released, its directory removed by a helper
// pod, and the volume deleted.
func TestProvisionWithPVController(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"persistentvolume-binder", "pv-protection", "pvc-protection", "local-path-provisioner"}, func(o *app.Options) {
		o.Controller.LocalPathRoot = root
	})
	ctx := cl.Context(60 * time.Second)
	if _, err := client.Resource[api.Node](cl.Client).Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-a"}}); err != nil {
		t.Fatal(err)
	}
	class(t, cl, "local-path", api.VolumeBindingWaitForFirstConsumer)
	cname := "local-path"
	claims := client.Resource[api.PersistentVolumeClaim](cl.Client).Namespace("default")
	c, err := claims.Create(ctx, &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: "db", Namespace: "default", Annotations: map[string]string{"volume.kubernetes.io/selected-node": "node-a"}},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: []api.PersistentVolumeAccessMode{api.ReadWriteOnce}, StorageClassName: &cname,
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	pvName := "pvc-" + string(c.UID)
	finish(t, cl, helperPod(t, cl, "helper-pod-create-"+pvName), api.PodSucceeded, 0)
	cl.Eventually(20*time.Second, "claim db Bound to "+pvName, func() (bool, error) {
		c, err := claims.Get(ctx, "db")
		if err != nil {
			return false, err
		}
		return c.Status.Phase == api.ClaimBound && c.Spec.VolumeName == pvName, fmt.Errorf("phase %s volume %q", c.Status.Phase, c.Spec.VolumeName)
	})
	if err := claims.Delete(ctx, "db", nil); err != nil {
		t.Fatal(err)
	}
	finish(t, cl, helperPod(t, cl, "helper-pod-delete-"+pvName), api.PodSucceeded, 0)
	cl.Eventually(20*time.Second, "volume "+pvName+" deleted", func() (bool, error) {
		_, err := client.Resource[api.PersistentVolume](cl.Client).Get(ctx, pvName)
		return apierrors.IsNotFound(err), err
	})
}

// A claim deleted while its directory is being made leaves nothing: once
// the create helper finished, a delete helper removes the directory, and
// both helper pods go; no volume is made.
func TestClaimDeletedWhileProvisioning(t *testing.T) {
	cl := start(t)
	c := claim(t, cl, "brief", "local-path", "node-a")
	pvName := "pvc-" + string(c.UID)
	create := helperPod(t, cl, "helper-pod-create-"+pvName)
	if err := client.Resource[api.PersistentVolumeClaim](cl.Client).Namespace("default").Delete(cl.Context(10*time.Second), "brief", nil); err != nil {
		t.Fatal(err)
	}
	finish(t, cl, create, api.PodSucceeded, 0)
	del := helperPod(t, cl, "helper-pod-delete-"+pvName)
	if del.Spec.NodeName != "node-a" || envOf(del.Spec.Containers[0], "VOL_DIR") != filepath.Join(root, pvName+"_default_brief") ||
		!slices.Equal(del.Spec.Containers[0].Command, []string{"sh", "-c", "set -eu\nrm -rf \"$VOL_DIR\"\n"}) {
		t.Fatalf("delete helper: node %q container %+v", del.Spec.NodeName, del.Spec.Containers[0])
	}
	gone(t, cl, create.Name)
	finish(t, cl, del, api.PodSucceeded, 0)
	gone(t, cl, del.Name)
	if _, err := client.Resource[api.PersistentVolume](cl.Client).Get(cl.Context(5*time.Second), pvName); !apierrors.IsNotFound(err) {
		t.Errorf("volume of a deleted claim: %v", err)
	}
}
