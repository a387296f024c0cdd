package realcomponents

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/storagevolume"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

// TestVolumeBindingAsKube runs the same pods with claims under
// kube-scheduler v1.37 and under ours, each against our apiserver (the test
// plays the PV controller and the provisioner), and compares what each
// scheduler did: the FailedScheduling messages and PodScheduled
// conditions of the pods that cannot be placed, the nodes of those that
// can, the claimRef written onto a chosen volume, and the selected-node
// written onto a claim to provision; and NodeVolumeLimits' rejection of a
// pod over a CSINode's volume limit (volumeLimitsScenario).
func TestVolumeBindingAsKube(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real kube-scheduler (skipped with -short)")
	}
	run := func(name string, start func(t *testing.T, s *apiservertest.Server)) []string {
		var out []string
		t.Run(name, func(t *testing.T) {
			s := apiservertest.Start(t, apiservertest.WithTLS)
			admin := s.AdminClient(t)
			start(t, s)
			out = volumeBindingScenario(t, admin)
		})
		return out
	}
	kube := run("kube-scheduler", func(t *testing.T, s *apiservertest.Server) {
		startKube(t, "kube-scheduler", filepath.Join(s.Options.CertDir, "scheduler.kubeconfig"))
	})
	ours := run("ours", func(t *testing.T, s *apiservertest.Server) {
		c := s.AdminClient(t)
		ctx, cancel := context.WithCancel(context.Background())
		log := slog.New(slog.DiscardHandler)
		b := events.NewBroadcaster(c, events.Options{Component: scheduling.DefaultSchedulerName, Host: "test", Logger: log})
		sched, err := scheduling.New(scheduling.Config{Client: c, Recorder: b.Recorder(), Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go b.Run(ctx)
		go func() { defer close(done); _ = sched.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	})
	if len(kube) == 0 {
		t.Fatal("no outcome from kube-scheduler")
	}
	for i := range max(len(kube), len(ours)) {
		k, o := "", ""
		if i < len(kube) {
			k = kube[i]
		}
		if i < len(ours) {
			o = ours[i]
		}
		if k != o {
			t.Errorf("kube-scheduler: %s\nours:           %s", k, o)
		}
	}
	t.Logf("kube-scheduler:\n%s", slices.Concat(kube))
}

// volumeBindingScenario creates two nodes, three classes (WaitForFirstConsumer
// with and without a provisioner, Immediate), volumes, claims and pods, and
// returns one line per observation, in a fixed order.
func volumeBindingScenario(t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for zone, n := range map[string]string{"z1": "node-a", "z2": "node-b"} {
		res := api.ResourceList{api.ResourceCPU: resource.MustParse("4"), api.ResourceMemory: resource.MustParse("8Gi"), api.ResourcePods: resource.MustParse("110")}
		now := api.Now()
		must(client.Resource[api.Node](c).Create(ctx, &api.Node{
			ObjectMeta: api.ObjectMeta{Name: n, Labels: map[string]string{api.LabelHostname: n, api.LabelTopologyZone: zone}},
			Status: api.NodeStatus{Capacity: res, Allocatable: res, Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue,
				Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}},
		}))
	}
	class := func(name, provisioner string, mode api.VolumeBindingMode) {
		must(client.Resource[api.StorageClass](c).Create(ctx, &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}))
	}
	class("local-path", "rancher.io/local-path", api.VolumeBindingWaitForFirstConsumer)
	class("manual", storagevolume.NotSupportedProvisioner, api.VolumeBindingWaitForFirstConsumer)
	class("standard", "example.com/immediate", api.VolumeBindingImmediate)
	pvs := client.Resource[api.PersistentVolume](c)
	claims := client.Resource[api.PersistentVolumeClaim](c).Namespace("default")
	// volume makes a local volume of class on the nodes (comma-separated).
	volume := func(name, class, node string) {
		var labels map[string]string
		if name == "pv-zoned" {
			labels = map[string]string{api.LabelTopologyZone: "z2"}
		}
		pv, err := pvs.Create(ctx, &api.PersistentVolume{
			ObjectMeta: api.ObjectMeta{Name: name, Labels: labels},
			Spec: api.PersistentVolumeSpec{
				Capacity:                      api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource:        api.PersistentVolumeSource{Local: &api.LocalVolumeSource{Path: "/mnt/" + name}},
				AccessModes:                   []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: api.PersistentVolumeReclaimRetain,
				StorageClassName:              class,
				NodeAffinity: &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
					MatchExpressions: []api.NodeSelectorRequirement{{Key: api.LabelHostname, Operator: api.NodeSelectorOpIn, Values: strings.Split(node, ",")}},
				}}}},
			},
		})
		must(pv, err)
		pv.Status.Phase = api.VolumeAvailable // the PV controller's part
		must(pvs.UpdateStatus(ctx, pv))
	}
	claim := func(name, class string, size ...string) {
		want := resource.MustParse("1Gi")
		if len(size) > 0 {
			want = resource.MustParse(size[0])
		}
		mode := api.ReadWriteOnce
		if name == "single" {
			mode = api.ReadWriteOncePod
		}
		must(claims.Create(ctx, &api.PersistentVolumeClaim{
			ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name},
			Spec: api.PersistentVolumeClaimSpec{
				AccessModes:      []api.PersistentVolumeAccessMode{mode},
				StorageClassName: &class,
				Resources:        api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: want}},
			},
		}))
	}
	// bind completes a binding as the PV controller does.
	bind := func(claimName, volumeName string) {
		t.Helper()
		pvc, err := claims.Get(ctx, claimName)
		must(pvc, err)
		pv, err := pvs.Get(ctx, volumeName)
		must(pv, err)
		if pv.Spec.ClaimRef == nil {
			pv.Spec.ClaimRef = storagevolume.ClaimRef(pvc)
			must(pvs.Update(ctx, pv))
		}
		pvc.Spec.VolumeName = volumeName
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[storagevolume.AnnBindCompleted] = "yes"
		must(claims.Update(ctx, pvc))
	}
	pods := client.Resource[api.Pod](c).Namespace("default")
	pod := func(name string, nodeSelector map[string]string, claimNames ...string) {
		p := &api.Pod{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       api.PodSpec{NodeSelector: nodeSelector, Containers: []api.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if name == "single-user" {
			p.Spec.NodeName = "node-a" // placed already
		}
		for i, cn := range claimNames {
			p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: cn}}})
		}
		must(pods.Create(ctx, p))
	}

	// The claims and volumes first, then (once the schedulers' informers
	// have them) the pods: a pod seen before its claim's last change
	// would be reported on differently on its first attempt.
	claim("imm", "standard")
	volume("pv-gone", "manual", "node-gone")
	claim("orphan", "manual")
	bind("orphan", "pv-gone")
	claim("nothing-fits", "manual", "5Gi")
	// A claim being deleted (held by the pvc-protection finalizer, which
	// no controller lifts here).
	claim("leaving", "local-path")
	must(nil, claims.Delete(ctx, "leaving", nil))
	// A claim bound to a volume that does not exist.
	claim("ghost", "manual")
	pvc, err := claims.Get(ctx, "ghost")
	must(pvc, err)
	pvc.Spec.VolumeName = "ghost"
	pvc.Annotations = map[string]string{storagevolume.AnnBindCompleted: "yes"}
	must(claims.Update(ctx, pvc))
	claim("single", "local-path")
	// A volume labelled with zone z2, reachable (by node affinity) from
	// both nodes: the zone decides.
	volume("pv-zoned", "manual", "node-a,node-b")
	claim("zoned", "manual")
	bind("zoned", "pv-zoned")
	volume("pv-b", "manual", "node-b")
	claim("pinned", "manual")
	bind("pinned", "pv-b")
	volume("pv-a", "manual", "node-a")
	claim("static", "manual")
	claim("dynamic", "local-path")
	pod("single-user", nil, "single") // placed already
	time.Sleep(2 * time.Second)

	// Pods that cannot be placed.
	pod("missing", nil, "nope")
	pod("immediate", nil, "imm")
	pod("orphan", nil, "orphan")
	pod("nothing-fits", nil, "nothing-fits")
	pod("leaving", nil, "leaving")
	pod("ghost", nil, "ghost")
	pod("single-second", nil, "single")
	// Pods that can.
	pod("zoned", nil, "zoned")
	pod("pinned", nil, "pinned")
	pod("static", map[string]string{api.LabelHostname: "node-a"}, "static")
	pod("dynamic", map[string]string{api.LabelHostname: "node-b"}, "dynamic")
	var out []string
	// kube-scheduler tells other components (the cluster autoscaler) where
	// a pod waiting in PreBind will go (NominatedNodeNameForExpectation).
	for _, name := range []string{"static", "dynamic"} {
		var line string
		waitFor(ctx, t, "nominatedNodeName of "+name, func() (bool, string) {
			p, err := pods.Get(ctx, name)
			if err != nil {
				return false, err.Error()
			}
			line = fmt.Sprintf("%s: nominatedNodeName %q", name, p.Status.NominatedNodeName)
			return p.Status.NominatedNodeName != "", line
		})
		out = append(out, line)
	}
	for _, name := range []string{"missing", "immediate", "orphan", "nothing-fits", "single-second", "leaving", "ghost"} {
		var line string
		waitFor(ctx, t, "FailedScheduling of "+name, func() (bool, string) {
			line = ""
			p, err := pods.Get(ctx, name)
			if err != nil {
				return false, err.Error()
			}
			for _, cd := range p.Status.Conditions {
				if cd.Type == api.PodScheduled {
					line = fmt.Sprintf("%s: node %q, PodScheduled %s %s %q", name, p.Spec.NodeName, cd.Status, cd.Reason, cd.Message)
				}
			}
			return line != "", fmt.Sprintf("%+v", p.Status)
		})
		out = append(out, line)
	}
	var claimRef, selected string
	waitFor(ctx, t, "the volume binding and provisioning to start", func() (bool, string) {
		pv, err := pvs.Get(ctx, "pv-a")
		if err != nil {
			return false, err.Error()
		}
		if r := pv.Spec.ClaimRef; r != nil {
			claimRef = fmt.Sprintf("pv-a claimRef %s/%s (uid set %v), bound-by-controller %q", r.Namespace, r.Name, r.UID != "", pv.Annotations[storagevolume.AnnBoundByController])
		}
		pvc, err := claims.Get(ctx, "dynamic")
		if err != nil {
			return false, err.Error()
		}
		if n, ok := pvc.Annotations[storagevolume.AnnSelectedNode]; ok {
			selected = "claim dynamic selected-node " + n
		}
		return claimRef != "" && selected != "", claimRef + "; " + selected
	})
	out = append(out, claimRef, selected)
	// The PV controller and the provisioner finish; the pods are bound.
	bind("static", "pv-a")
	volume("pvc-dynamic", "local-path", "node-b")
	bind("dynamic", "pvc-dynamic")
	for _, name := range []string{"pinned", "static", "dynamic", "zoned"} {
		var node string
		waitFor(ctx, t, name+" bound", func() (bool, string) {
			p, err := pods.Get(ctx, name)
			if err != nil {
				return false, err.Error()
			}
			node = p.Spec.NodeName
			return node != "", "unbound"
		})
		out = append(out, name+" bound to "+node)
	}
	out = append(out, volumeLimitsScenario(ctx, t, c, bind, pod)...)
	return out
}

// volumeLimitsScenario checks NodeVolumeLimits: node-a's CSINode lets
// driver csi.example.com attach one volume; a pod with a claim bound to a
// CSI volume of that driver goes to node-a, a second one (pinned there)
// with another such claim is Unschedulable there; a pod whose volume's
// driver opts in with preventPodSchedulingIfMissing and is on no node is
// Unschedulable everywhere (VolumeLimitScaling).
func volumeLimitsScenario(ctx context.Context, t *testing.T, c *client.Client, bind func(claim, volume string), pod func(name string, nodeSelector map[string]string, claims ...string)) []string {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const driver = "csi.example.com"
	one := int32(1)
	must(client.Resource[api.CSINode](c).Create(ctx, &api.CSINode{
		ObjectMeta: api.ObjectMeta{Name: "node-a"},
		Spec:       api.CSINodeSpec{Drivers: []api.CSINodeDriver{{Name: driver, NodeID: "node-a", Allocatable: &api.VolumeNodeResources{Count: &one}}}},
	}))
	pvs := client.Resource[api.PersistentVolume](c)
	claims := client.Resource[api.PersistentVolumeClaim](c).Namespace("default")
	class := "csi"
	// boundClaim makes claim name bound to a CSI volume of driver.
	boundClaim := func(name, driver string) {
		pv, err := pvs.Create(ctx, &api.PersistentVolume{
			ObjectMeta: api.ObjectMeta{Name: "pv-" + name},
			Spec: api.PersistentVolumeSpec{
				Capacity:                      api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")},
				PersistentVolumeSource:        api.PersistentVolumeSource{CSI: []byte(fmt.Sprintf(`{"driver":%q,"volumeHandle":"handle-%s"}`, driver, name))},
				AccessModes:                   []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: api.PersistentVolumeReclaimRetain,
				StorageClassName:              class,
			},
		})
		must(pv, err)
		pv.Status.Phase = api.VolumeAvailable
		must(pvs.UpdateStatus(ctx, pv))
		must(claims.Create(ctx, &api.PersistentVolumeClaim{
			ObjectMeta: api.ObjectMeta{Namespace: "default", Name: name},
			Spec: api.PersistentVolumeClaimSpec{
				AccessModes:      []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
				StorageClassName: &class,
				Resources:        api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}))
		bind(name, "pv-"+name)
	}
	for _, name := range []string{"csi-1", "csi-2"} {
		boundClaim(name, driver)
	}
	// VolumeLimitScaling (beta, on in v1.37): a driver whose CSIDriver
	// sets preventPodSchedulingIfMissing, listed by no CSINode.
	const strict = "strict.csi.example.com"
	yes := true
	must(client.Resource[api.CSIDriver](c).Create(ctx, &api.CSIDriver{ObjectMeta: api.ObjectMeta{Name: strict},
		Spec: api.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}}))
	boundClaim("csi-strict", strict)
	time.Sleep(2 * time.Second)
	pods := client.Resource[api.Pod](c).Namespace("default")
	onA := map[string]string{api.LabelHostname: "node-a"}
	pod("csi-first", onA, "csi-1")
	var out []string
	waitFor(ctx, t, "csi-first bound", func() (bool, string) {
		p, err := pods.Get(ctx, "csi-first")
		if err != nil {
			return false, err.Error()
		}
		return p.Spec.NodeName != "", fmt.Sprintf("%+v", p.Status)
	})
	out = append(out, "csi-first bound")
	pod("csi-second", onA, "csi-2")
	var line string
	waitFor(ctx, t, "FailedScheduling of csi-second", func() (bool, string) {
		line = ""
		p, err := pods.Get(ctx, "csi-second")
		if err != nil {
			return false, err.Error()
		}
		for _, cd := range p.Status.Conditions {
			if cd.Type == api.PodScheduled {
				line = fmt.Sprintf("csi-second: node %q, PodScheduled %s %s %q", p.Spec.NodeName, cd.Status, cd.Reason, cd.Message)
			}
		}
		return line != "", fmt.Sprintf("%+v", p.Status)
	})
	out = append(out, line)
	pod("csi-strict-pod", nil, "csi-strict")
	waitFor(ctx, t, "FailedScheduling of csi-strict-pod", func() (bool, string) {
		line = ""
		p, err := pods.Get(ctx, "csi-strict-pod")
		if err != nil {
			return false, err.Error()
		}
		for _, cd := range p.Status.Conditions {
			if cd.Type == api.PodScheduled {
				line = fmt.Sprintf("csi-strict-pod: node %q, PodScheduled %s %s %q", p.Spec.NodeName, cd.Status, cd.Reason, cd.Message)
			}
		}
		return line != "", fmt.Sprintf("%+v", p.Status)
	})
	return append(out, line)
}
