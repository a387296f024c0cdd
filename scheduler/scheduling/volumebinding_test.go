package scheduling_test

import (
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/storagevolume"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

// sub is e reporting to the subtest t.
func (e *env) sub(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

func (e *env) create(obj any) {
	e.t.Helper()
	var err error
	switch o := obj.(type) {
	case *api.StorageClass:
		_, err = client.Resource[api.StorageClass](e.c).Create(e.ctx, o)
	case *api.PersistentVolume:
		// The PV controller makes a new volume Available.
		var pv *api.PersistentVolume
		if pv, err = client.Resource[api.PersistentVolume](e.c).Create(e.ctx, o); err == nil {
			pv.Status.Phase = api.VolumeAvailable
			_, err = client.Resource[api.PersistentVolume](e.c).UpdateStatus(e.ctx, pv)
		}
	case *api.PersistentVolumeClaim:
		_, err = client.Resource[api.PersistentVolumeClaim](e.c).Namespace(o.Namespace).Create(e.ctx, o)
	default:
		e.t.Fatalf("create %T", obj)
	}
	if err != nil {
		e.t.Fatalf("create %T: %v", obj, err)
	}
}

func (e *env) claim(name string) *api.PersistentVolumeClaim {
	e.t.Helper()
	c, err := client.Resource[api.PersistentVolumeClaim](e.c).Namespace("default").Get(e.ctx, name)
	if err != nil {
		e.t.Fatalf("get claim %s: %v", name, err)
	}
	return c
}

// completeBinding does what the PV controller does once a claim and a
// volume are meant for each other: the volume's claimRef, the claim's
// volumeName and bind-completed.
func (e *env) completeBinding(claimName, volumeName string) {
	e.t.Helper()
	pvs := client.Resource[api.PersistentVolume](e.c)
	pv, err := pvs.Get(e.ctx, volumeName)
	if err != nil {
		e.t.Fatal(err)
	}
	c := e.claim(claimName)
	if pv.Spec.ClaimRef == nil {
		pv.Spec.ClaimRef = storagevolume.ClaimRef(c)
		if _, err := pvs.Update(e.ctx, pv); err != nil {
			e.t.Fatalf("bind volume %s: %v", volumeName, err)
		}
	}
	c.Spec.VolumeName = volumeName
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[storagevolume.AnnBindCompleted] = "yes"
	if _, err := client.Resource[api.PersistentVolumeClaim](e.c).Namespace("default").Update(e.ctx, c); err != nil {
		e.t.Fatalf("bind claim %s: %v", claimName, err)
	}
}

func storageClass(name, provisioner string, mode api.VolumeBindingMode) *api.StorageClass {
	return &api.StorageClass{TypeMeta: api.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"}, ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

func newClaim(name, class string) *api.PersistentVolumeClaim {
	return &api.PersistentVolumeClaim{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name},
		Spec: api.PersistentVolumeClaimSpec{
			AccessModes:      []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

// localVolume is a local volume of class on node.
func localVolume(name, class, node string) *api.PersistentVolume {
	return &api.PersistentVolume{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.PersistentVolumeSpec{
			Capacity:                      api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource:        api.PersistentVolumeSource{Local: &api.LocalVolumeSource{Path: "/mnt/" + name}},
			AccessModes:                   []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: api.PersistentVolumeReclaimRetain,
			StorageClassName:              class,
			NodeAffinity: &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
				MatchExpressions: []api.NodeSelectorRequirement{{Key: api.LabelHostname, Operator: api.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
}

func podUsing(name string, claims ...string) *api.Pod {
	p := schedtest.Pod("default", name, "", "")
	for i, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: fmt.Sprintf("data%d", i), VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

// unschedulable waits until the pod's PodScheduled condition is False
// with message and a FailedScheduling event says the same.
func (e *env) unschedulable(pod, message string) {
	e.t.Helper()
	e.eventually(pod+" FailedScheduling", func() (bool, string) { return e.hasEvent(pod, "FailedScheduling", message) })
	e.eventually(pod+" PodScheduled=False", func() (bool, string) {
		p := e.pod(pod)
		for _, c := range p.Status.Conditions {
			if c.Type == api.PodScheduled && c.Status == api.ConditionFalse && c.Reason == api.PodReasonUnschedulable && c.Message == message {
				return true, ""
			}
		}
		return false, fmt.Sprintf("nodeName %q conditions %+v", p.Spec.NodeName, p.Status.Conditions)
	})
	if n := e.pod(pod).Spec.NodeName; n != "" {
		e.t.Errorf("pod %s bound to %s", pod, n)
	}
}

// TestVolumeBinding runs the VolumeBinding plugin against a real apiserver,
// the PV controller's and the provisioner's part played by the test.
func TestVolumeBinding(t *testing.T) {
	e := start(t)
	e.createNodes(schedtest.Node("node-a", "4", "8Gi", 110), schedtest.Node("node-b", "4", "8Gi", 110))
	e.create(storageClass("local-path", "rancher.io/local-path", api.VolumeBindingWaitForFirstConsumer))
	e.create(storageClass("manual", storagevolume.NotSupportedProvisioner, api.VolumeBindingWaitForFirstConsumer))
	e.create(storageClass("standard", "example.com/immediate", api.VolumeBindingImmediate))

	t.Run("missing claim", func(t *testing.T) {
		e := e.sub(t)
		// "not found" is kube v1.37's PostFilter message after a PreFilter
		// rejection (see runPostFilter); TestVolumeBindingAsKube checks it.
		e.createPod(podUsing("no-claim", "missing"))
		e.unschedulable("no-claim", `0/2 nodes are available: persistentvolumeclaim "missing" not found. not found`)
		// The claim appears: the pod is tried again and its volume
		// provisioned on the node chosen.
		e.create(newClaim("missing", "local-path"))
		e.eventually("selected-node on the claim", func() (bool, string) {
			c := e.claim("missing")
			return c.Annotations[storagevolume.AnnSelectedNode] != "", fmt.Sprintf("annotations %v", c.Annotations)
		})
	})

	t.Run("unbound immediate claim", func(t *testing.T) {
		e := e.sub(t)
		e.create(newClaim("imm", "standard"))
		e.createPod(podUsing("imm-pod", "imm"))
		e.unschedulable("imm-pod", "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found")
	})

	t.Run("bound volume pins the pod to its node", func(t *testing.T) {
		e := e.sub(t)
		e.create(localVolume("pv-b", "manual", "node-b"))
		e.create(newClaim("pinned", "manual"))
		e.completeBinding("pinned", "pv-b")
		for i := range 3 {
			e.createPod(podUsing(fmt.Sprintf("pinned-%d", i), "pinned"))
		}
		for i := range 3 {
			e.waitBound(fmt.Sprintf("pinned-%d", i), "node-b")
		}
	})

	t.Run("bound volume on no fitting node", func(t *testing.T) {
		e := e.sub(t)
		e.create(localVolume("pv-gone", "manual", "node-gone"))
		e.create(newClaim("orphan", "manual"))
		e.completeBinding("orphan", "pv-gone")
		e.createPod(podUsing("orphan-pod", "orphan"))
		e.unschedulable("orphan-pod", "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
	})

	t.Run("wffc claim takes an available volume", func(t *testing.T) {
		e := e.sub(t)
		e.create(localVolume("pv-static-a", "manual", "node-a"))
		e.create(newClaim("static", "manual"))
		e.createPod(podUsing("static-pod", "static"))
		e.eventually("claimRef on pv-static-a", func() (bool, string) {
			pv, err := client.Resource[api.PersistentVolume](e.c).Get(e.ctx, "pv-static-a")
			if err != nil {
				return false, err.Error()
			}
			return pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Name == "static", fmt.Sprintf("claimRef %+v", pv.Spec.ClaimRef)
		})
		if n := e.pod("static-pod").Spec.NodeName; n != "" {
			t.Fatalf("pod bound to %s before its claim was", n)
		}
		// Waiting in PreBind, the pod says where it goes, as kube's does.
		e.eventually("nominatedNodeName node-a", func() (bool, string) {
			n := e.pod("static-pod").Status.NominatedNodeName
			return n == "node-a", "nominatedNodeName " + n
		})
		e.completeBinding("static", "pv-static-a")
		e.waitBound("static-pod", "node-a")
	})

	t.Run("wffc claim provisioned on the node chosen", func(t *testing.T) {
		e := e.sub(t)
		e.create(newClaim("dyn", "local-path"))
		p := podUsing("dyn-pod", "dyn")
		p.Spec.NodeSelector = map[string]string{api.LabelHostname: "node-b"}
		e.createPod(p)
		e.eventually("selected-node=node-b on the claim", func() (bool, string) {
			c := e.claim("dyn")
			return c.Annotations[storagevolume.AnnSelectedNode] == "node-b", fmt.Sprintf("annotations %v", c.Annotations)
		})
		// The provisioner makes a volume on node-b; the PV controller binds.
		e.create(localVolume("pvc-dyn", "local-path", "node-b"))
		e.completeBinding("dyn", "pvc-dyn")
		e.waitBound("dyn-pod", "node-b")
	})

	t.Run("provisioner gives up", func(t *testing.T) {
		e := e.sub(t)
		e.create(newClaim("flaky", "local-path"))
		p := podUsing("flaky-pod", "flaky")
		p.Spec.NodeSelector = map[string]string{api.LabelHostname: "node-a"}
		e.createPod(p)
		e.eventually("selected-node on the claim", func() (bool, string) {
			c := e.claim("flaky")
			return c.Annotations[storagevolume.AnnSelectedNode] == "node-a", fmt.Sprintf("annotations %v", c.Annotations)
		})
		// The provisioner (named on the claim by the PV controller)
		// removes selected-node: kube's reschedule.
		c := e.claim("flaky")
		delete(c.Annotations, storagevolume.AnnSelectedNode)
		c.Annotations[storagevolume.AnnStorageProvisioner] = "rancher.io/local-path"
		if _, err := client.Resource[api.PersistentVolumeClaim](e.c).Namespace("default").Update(e.ctx, c); err != nil {
			t.Fatal(err)
		}
		e.eventually("FailedScheduling after the provisioner gave up", func() (bool, string) {
			return e.hasEvent("flaky-pod", "FailedScheduling", `running PreBind plugin "VolumeBinding": binding volumes: provisioning failed for PVC "flaky"`)
		})
		// The pod is retried: the claim gets selected-node again.
		e.eventually("selected-node set again", func() (bool, string) {
			c := e.claim("flaky")
			return c.Annotations[storagevolume.AnnSelectedNode] == "node-a", fmt.Sprintf("annotations %v", c.Annotations)
		})
	})
}
