package nodevolumelimits

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

type fixture struct {
	claims      *icache.Store[api.PersistentVolumeClaim]
	volumes     *icache.Store[api.PersistentVolume]
	classes     *icache.Store[api.StorageClass]
	csiNodes    *icache.Store[api.CSINode]
	attachments *icache.Store[api.VolumeAttachment]
	drivers     *icache.Store[api.CSIDriver]
	pl          *Plugin
}

func newFixture() *fixture {
	f := &fixture{
		claims:      icache.NewStore[api.PersistentVolumeClaim](nil),
		volumes:     icache.NewStore[api.PersistentVolume](nil),
		classes:     icache.NewStore[api.StorageClass](nil),
		csiNodes:    icache.NewStore[api.CSINode](nil),
		attachments: icache.NewStore[api.VolumeAttachment](nil),
		drivers:     icache.NewStore[api.CSIDriver](nil),
	}
	storage := func(r string) apierrors.GroupResource {
		return apierrors.GroupResource{Group: "storage.k8s.io", Resource: r}
	}
	f.pl = New(Listers{
		Claims:      icache.NewLister(f.claims, apierrors.GroupResource{Resource: "persistentvolumeclaims"}),
		Volumes:     icache.NewLister(f.volumes, apierrors.GroupResource{Resource: "persistentvolumes"}),
		Classes:     icache.NewLister(f.classes, storage("storageclasses")),
		CSINodes:    icache.NewLister(f.csiNodes, storage("csinodes")),
		Attachments: icache.NewLister(f.attachments, storage("volumeattachments")),
		CSIDrivers:  icache.NewLister(f.drivers, storage("csidrivers")),
	}, nil)
	return f
}

// boundCSI adds claim bound to a PV of driver with handle.
func (f *fixture) boundCSI(claim, driver, handle string) {
	pv := "pv-" + claim
	csi, _ := json.Marshal(map[string]string{"driver": driver, "volumeHandle": handle})
	f.volumes.Add(&api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: pv}, Spec: api.PersistentVolumeSpec{PersistentVolumeSource: api.PersistentVolumeSource{CSI: csi}}})
	f.claims.Add(&api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: claim}, Spec: api.PersistentVolumeClaimSpec{VolumeName: pv}})
}

func (f *fixture) limit(node string, drivers map[string]int32) {
	cn := &api.CSINode{ObjectMeta: api.ObjectMeta{Name: node}}
	for d, n := range drivers {
		d := api.CSINodeDriver{Name: d, NodeID: node}
		if n >= 0 {
			d.Allocatable = &api.VolumeNodeResources{Count: &n}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, d)
	}
	f.csiNodes.Add(cn)
}

func claimPod(name string, claims ...string) *api.Pod {
	p := schedtest.Pod("ns", name, "", "")
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: c, VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func TestPreFilterSkipsPodsWithoutClaims(t *testing.T) {
	f := newFixture()
	state := framework.NewCycleState()
	if s := f.pl.PreFilter(t.Context(), state, schedtest.Pod("ns", "p", "", "")); !s.IsSkip() {
		t.Errorf("no volumes: %v, want Skip", s)
	}
	empty := schedtest.Pod("ns", "p", "", "")
	empty.Spec.Volumes = []api.Volume{{Name: "e", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}}
	if s := f.pl.PreFilter(t.Context(), state, empty); !s.IsSkip() {
		t.Errorf("emptyDir: %v, want Skip", s)
	}
	if s := f.pl.PreFilter(t.Context(), state, claimPod("p", "c")); s != nil {
		t.Errorf("claim: %v, want success", s)
	}
}

func TestFilter(t *testing.T) {
	f := newFixture()
	f.boundCSI("a", "ebs.csi", "vol-a")
	f.boundCSI("b", "ebs.csi", "vol-b")
	f.boundCSI("a-again", "ebs.csi", "vol-a") // same handle as a
	f.boundCSI("other", "gce.csi", "vol-o")
	f.volumes.Add(&api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv-host"}})
	f.claims.Add(&api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "host"}, Spec: api.PersistentVolumeClaimSpec{VolumeName: "pv-host"}})
	cls := "fast"
	f.classes.Add(&api.StorageClass{ObjectMeta: api.ObjectMeta{Name: "fast"}, Provisioner: "ebs.csi"})
	f.claims.Add(&api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "unbound"}, Spec: api.PersistentVolumeClaimSpec{StorageClassName: &cls}})

	f.limit("one", map[string]int32{"ebs.csi": 1})
	f.limit("two", map[string]int32{"ebs.csi": 2})
	f.limit("nocount", map[string]int32{"ebs.csi": -1})
	one := schedtest.Node("one", "1", "1Gi", 10)
	two := schedtest.Node("two", "1", "1Gi", 10)
	nocount := schedtest.Node("nocount", "1", "1Gi", 10)
	bare := schedtest.Node("bare", "1", "1Gi", 10) // no CSINode

	onA := schedtest.OnNode(claimPod("existing", "a"), "")
	cases := []struct {
		name     string
		pod      *api.Pod
		node     *api.Node
		existing []*api.Pod
		want     string
	}{
		{"first volume fits", claimPod("p", "b"), one, nil, ""},
		{"second volume over the limit", claimPod("p", "b"), one, []*api.Pod{onA}, ErrReasonMaxVolumeCountExceeded},
		{"two new volumes over the limit", claimPod("p", "a", "b"), one, nil, ErrReasonMaxVolumeCountExceeded},
		{"same volume counts once", claimPod("p", "a"), one, []*api.Pod{onA}, ""},
		{"same handle through another claim counts once", claimPod("p", "a-again"), one, []*api.Pod{onA}, ""},
		{"within a larger limit", claimPod("p", "b"), two, []*api.Pod{onA}, ""},
		{"other driver has no limit", claimPod("p", "other"), one, []*api.Pod{onA}, ""},
		{"non-CSI volume not counted", claimPod("p", "host"), one, []*api.Pod{onA}, ""},
		{"unbound claim counts against its provisioner", claimPod("p", "unbound"), one, []*api.Pod{onA}, ErrReasonMaxVolumeCountExceeded},
		{"driver without allocatable: no limit", claimPod("p", "a", "b"), nocount, nil, ""},
		{"no CSINode: no limit", claimPod("p", "a", "b"), bare, nil, ""},
		{"missing claim", claimPod("p", "ghost"), one, nil, `looking up PVC ns/ghost: persistentvolumeclaim "ghost" not found`},
		{"existing pod's missing claim not counted", claimPod("p", "b"), one, []*api.Pod{claimPod("existing", "ghost")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := schedtest.Filter(f.pl, tc.pod, schedtest.NodeInfo(tc.node, tc.existing...))
			if got := s.Message(); got != tc.want {
				t.Fatalf("message %q, want %q", got, tc.want)
			}
			if tc.want == ErrReasonMaxVolumeCountExceeded && s.Code != framework.Unschedulable {
				t.Errorf("code %v, want Unschedulable", s.Code)
			}
			if tc.name == "missing claim" && s.Code != framework.UnschedulableAndUnresolvable {
				t.Errorf("code %v, want UnschedulableAndUnresolvable", s.Code)
			}
		})
	}
}

func TestFilterCountsVolumeAttachments(t *testing.T) {
	f := newFixture()
	f.boundCSI("a", "ebs.csi", "vol-a")
	f.boundCSI("b", "ebs.csi", "vol-b")
	f.limit("one", map[string]int32{"ebs.csi": 1})
	one := schedtest.Node("one", "1", "1Gi", 10)
	pv := "pv-a"
	f.attachments.Add(&api.VolumeAttachment{ObjectMeta: api.ObjectMeta{Name: "va"}, Spec: api.VolumeAttachmentSpec{Attacher: "ebs.csi", NodeName: "one", Source: api.VolumeAttachmentSource{PersistentVolumeName: &pv}}})
	if got := schedtest.Filter(f.pl, claimPod("p", "b"), schedtest.NodeInfo(one)).Message(); got != ErrReasonMaxVolumeCountExceeded {
		t.Errorf("attached vol-a, pod with vol-b: %q", got)
	}
	// As in kube, a new pod's volume is deduplicated against the pods'
	// volumes only: an attachment with no pod still counts apart.
	if got := schedtest.Filter(f.pl, claimPod("p", "a"), schedtest.NodeInfo(one)).Message(); got != ErrReasonMaxVolumeCountExceeded {
		t.Errorf("attached vol-a, pod with vol-a: %q", got)
	}
	// An attachment of a pod's volume is not counted twice.
	if got := schedtest.Filter(f.pl, claimPod("p", "a"), schedtest.NodeInfo(one, claimPod("existing", "a"))).Message(); got != "" {
		t.Errorf("vol-a attached and used by a pod, pod with vol-a: %q", got)
	}
}

// TestFilterDriverNotInstalled is kube v1.37's VolumeLimitScaling: a
// driver whose CSIDriver sets preventPodSchedulingIfMissing keeps the pod
// off nodes whose CSINode does not list it (none at all included), before
// any limit is looked at; other drivers, with the field false or without
// a CSIDriver, are let through.
func TestFilterDriverNotInstalled(t *testing.T) {
	f := newFixture()
	yes, no := true, false
	f.drivers.Add(&api.CSIDriver{ObjectMeta: api.ObjectMeta{Name: "strict.csi"}, Spec: api.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}})
	f.drivers.Add(&api.CSIDriver{ObjectMeta: api.ObjectMeta{Name: "lax.csi"}, Spec: api.CSIDriverSpec{PreventPodSchedulingIfMissing: &no}})
	f.boundCSI("strict", "strict.csi", "vol-s")
	f.boundCSI("lax", "lax.csi", "vol-l")
	f.boundCSI("unknown", "unknown.csi", "vol-u")
	f.limit("with", map[string]int32{"strict.csi": -1})
	f.limit("other", map[string]int32{"lax.csi": 5})
	for _, c := range []struct {
		node, claim, want string
	}{
		{"with", "strict", ""},
		{"other", "strict", "strict.csi CSI driver is not installed on the node"},
		{"no-csinode", "strict", "strict.csi CSI driver is not installed on the node"},
		{"other", "lax", ""},
		{"no-csinode", "lax", ""},
		{"no-csinode", "unknown", ""},
	} {
		s := schedtest.Filter(f.pl, claimPod("p", c.claim), schedtest.NodeInfo(schedtest.Node(c.node, "1", "1Gi", 10)))
		if s.Message() != c.want {
			t.Errorf("claim %s on node %s: %q, want %q", c.claim, c.node, s.Message(), c.want)
		}
		if c.want != "" && s.Code != framework.Unschedulable {
			t.Errorf("claim %s on node %s: code %v, want Unschedulable", c.claim, c.node, s.Code)
		}
	}
}

func TestFilterEphemeral(t *testing.T) {
	f := newFixture()
	f.limit("one", map[string]int32{"ebs.csi": 1})
	one := schedtest.Node("one", "1", "1Gi", 10)
	f.boundCSI("a", "ebs.csi", "vol-a")
	pod := schedtest.Pod("ns", "p", "", "")
	pod.UID = "uid-p"
	pod.Spec.Volumes = []api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{Ephemeral: json.RawMessage(`{"volumeClaimTemplate":{"spec":{}}}`)}}}
	csi, _ := json.Marshal(map[string]string{"driver": "ebs.csi", "volumeHandle": "vol-e"})
	f.volumes.Add(&api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "pv-e"}, Spec: api.PersistentVolumeSpec{PersistentVolumeSource: api.PersistentVolumeSource{CSI: csi}}})
	yes := true
	f.claims.Add(&api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p-scratch",
		OwnerReferences: []api.OwnerReference{{Kind: "Pod", Name: "p", UID: "uid-p", Controller: &yes}}}, Spec: api.PersistentVolumeClaimSpec{VolumeName: "pv-e"}})
	if got := schedtest.Filter(f.pl, pod, schedtest.NodeInfo(one)).Message(); got != "" {
		t.Errorf("ephemeral alone: %q", got)
	}
	if got := schedtest.Filter(f.pl, pod, schedtest.NodeInfo(one, claimPod("existing", "a"))).Message(); got != ErrReasonMaxVolumeCountExceeded {
		t.Errorf("ephemeral beside vol-a: %q", got)
	}
	other := *pod
	other.UID = "uid-other"
	if got := schedtest.Filter(f.pl, &other, schedtest.NodeInfo(one)).Message(); got != "PVC ns/p-scratch was not created for pod ns/p (pod is not owner)" {
		t.Errorf("claim of another pod: %q", got)
	}
}

func TestCSINodeUpdateQueues(t *testing.T) {
	n := func(c int32) *api.CSINode {
		return &api.CSINode{Spec: api.CSINodeSpec{Drivers: []api.CSINodeDriver{{Name: "d", Allocatable: &api.VolumeNodeResources{Count: &c}}}}}
	}
	if !CSINodeUpdateQueues(n(1), n(2)) {
		t.Error("grown count does not queue")
	}
	if CSINodeUpdateQueues(n(2), n(2)) || CSINodeUpdateQueues(n(2), n(1)) {
		t.Error("same or smaller count queues")
	}
	if !CSINodeUpdateQueues(&api.CSINode{}, n(1)) {
		t.Error("new driver with a count does not queue")
	}
}
