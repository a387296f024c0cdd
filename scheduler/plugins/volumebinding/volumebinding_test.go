package volumebinding

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/storagevolume"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

// world holds the informer stores behind fake listers, and the API writes
// the plugin made (applied to the stores with a new resourceVersion, as
// the informers would deliver them).
type world struct {
	mu      sync.Mutex
	rv      int
	pods    *icache.Store[api.Pod]
	nodes   *icache.Store[api.Node]
	claims  *icache.Store[api.PersistentVolumeClaim]
	volumes *icache.Store[api.PersistentVolume]
	classes *icache.Store[api.StorageClass]
	writes  []string
}

func newWorld() *world {
	return &world{
		pods:    icache.NewStore[api.Pod](nil),
		nodes:   icache.NewStore[api.Node](nil),
		claims:  icache.NewStore[api.PersistentVolumeClaim](nil),
		volumes: icache.NewStore[api.PersistentVolume](nil),
		classes: icache.NewStore[api.StorageClass](nil),
	}
}

func (w *world) listers() Listers {
	return Listers{
		Pods:    icache.NewLister(w.pods, apierrors.GroupResource{Resource: "pods"}),
		Nodes:   icache.NewLister(w.nodes, apierrors.GroupResource{Resource: "nodes"}),
		Claims:  icache.NewLister(w.claims, apierrors.GroupResource{Resource: "persistentvolumeclaims"}),
		Volumes: icache.NewLister(w.volumes, apierrors.GroupResource{Resource: "persistentvolumes"}),
		Classes: icache.NewLister(w.classes, apierrors.GroupResource{Group: "storage.k8s.io", Resource: "storageclasses"}),
	}
}

func (w *world) nextRV() string {
	w.rv++
	return strconv.Itoa(w.rv)
}

// UpdateVolume implements Writer.
func (w *world) UpdateVolume(_ context.Context, pv *api.PersistentVolume) (*api.PersistentVolume, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.volumes.GetByKey(pv.Name); !ok || cur.ResourceVersion != pv.ResourceVersion {
		return nil, apierrors.NewConflict(apierrors.GroupResource{Resource: "persistentvolumes"}, pv.Name, fmt.Errorf("the object has been modified"))
	}
	out := api.DeepCopy(pv)
	out.ResourceVersion = w.nextRV()
	w.volumes.Update(out)
	w.writes = append(w.writes, "update pv "+pv.Name+" claimRef="+pv.Spec.ClaimRef.Namespace+"/"+pv.Spec.ClaimRef.Name)
	return out, nil
}

// UpdateClaim implements Writer.
func (w *world) UpdateClaim(_ context.Context, pvc *api.PersistentVolumeClaim) (*api.PersistentVolumeClaim, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := api.DeepCopy(pvc)
	out.ResourceVersion = w.nextRV()
	w.claims.Update(out)
	w.writes = append(w.writes, "update pvc "+claimKey(pvc)+" selected-node="+pvc.Annotations[storagevolume.AnnSelectedNode])
	return out, nil
}

// change applies f to a copy of the stored claim with a new version (what
// the PV controller or a provisioner would do).
func (w *world) changeClaim(key string, f func(*api.PersistentVolumeClaim)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur, ok := w.claims.GetByKey(key)
	if !ok {
		panic("no claim " + key)
	}
	c := api.DeepCopy(cur)
	f(c)
	c.ResourceVersion = w.nextRV()
	w.claims.Update(c)
}

func (w *world) add(objs ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range objs {
		switch o := o.(type) {
		case *api.Pod:
			w.pods.Add(o)
		case *api.Node:
			w.nodes.Add(o)
		case *api.PersistentVolumeClaim:
			o.ResourceVersion = w.nextRV()
			w.claims.Add(o)
		case *api.PersistentVolume:
			o.ResourceVersion = w.nextRV()
			w.volumes.Add(o)
		case *api.StorageClass:
			w.classes.Add(o)
		default:
			panic(fmt.Sprintf("unexpected %T", o))
		}
	}
}

func class(name, provisioner string, mode api.VolumeBindingMode) *api.StorageClass {
	return &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

func claim(name, className, size string) *api.PersistentVolumeClaim {
	return &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: api.UID("uid-" + name)},
		Spec: api.PersistentVolumeClaimSpec{
			AccessModes:      []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
			StorageClassName: &className,
			Resources:        api.VolumeResourceRequirements{Requests: api.ResourceList{api.ResourceStorage: resource.MustParse(size)}},
		},
		Status: api.PersistentVolumeClaimStatus{Phase: api.ClaimPending},
	}
}

// boundClaim is a claim the PV controller bound to volume.
func boundClaim(name, className, volume string) *api.PersistentVolumeClaim {
	c := claim(name, className, "1Gi")
	c.Spec.VolumeName = volume
	c.Annotations = map[string]string{storagevolume.AnnBindCompleted: "yes"}
	c.Status.Phase = api.ClaimBound
	return c
}

func volume(name, className, size, node string) *api.PersistentVolume {
	pv := &api.PersistentVolume{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.PersistentVolumeSpec{
			Capacity:         api.ResourceList{api.ResourceStorage: resource.MustParse(size)},
			AccessModes:      []api.PersistentVolumeAccessMode{api.ReadWriteOnce},
			StorageClassName: className,
		},
		Status: api.PersistentVolumeStatus{Phase: api.VolumeAvailable},
	}
	if node != "" {
		pv.Spec.NodeAffinity = &api.VolumeNodeAffinity{Required: &api.NodeSelector{NodeSelectorTerms: []api.NodeSelectorTerm{{
			MatchExpressions: []api.NodeSelectorRequirement{{Key: api.LabelHostname, Operator: api.NodeSelectorOpIn, Values: []string{node}}},
		}}}}
	}
	return pv
}

// boundVolume is pv bound to the claim ns/claim.
func boundVolume(pv *api.PersistentVolume, claim string) *api.PersistentVolume {
	pv.Spec.ClaimRef = &api.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "ns", Name: claim, UID: api.UID("uid-" + claim)}
	pv.Status.Phase = api.VolumeBound
	return pv
}

func podWithClaims(name string, claims ...string) *api.Pod {
	p := schedtest.Pod("ns", name, "", "")
	p.UID = api.UID("uid-" + name)
	for i, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, api.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

const (
	wffc      = api.VolumeBindingWaitForFirstConsumer
	immediate = api.VolumeBindingImmediate
)

func newPlugin(w *world) *Plugin {
	p := New(w.listers(), w, time.Minute, slog.New(slog.DiscardHandler))
	p.binder.pollInterval = 5 * time.Millisecond
	return p
}

// filter runs PreFilter and Filter on every node and returns each node's
// verdict ("" fits), or the PreFilter's as "prefilter: ...".
func filter(t *testing.T, p *Plugin, state *framework.CycleState, pod *api.Pod, nodes ...*api.Node) map[string]string {
	t.Helper()
	ctx := t.Context()
	st := p.PreFilter(ctx, state, pod)
	if st.IsSkip() {
		return map[string]string{"prefilter": "skip"}
	}
	if !st.IsSuccess() {
		return map[string]string{"prefilter": fmt.Sprintf("%d %s", st.Code, st.Message())}
	}
	out := map[string]string{}
	for _, n := range nodes {
		st := p.Filter(ctx, state, pod, schedtest.NodeInfo(n))
		if st != nil && st.Code == framework.Error {
			t.Fatalf("Filter on %s: %v", n.Name, st.AsError())
		}
		out[n.Name] = st.Message()
	}
	return out
}

func TestPreFilter(t *testing.T) {
	t.Parallel()
	deleting := claim("deleting", "local", "1Gi")
	now := api.Now()
	deleting.DeletionTimestamp = &now
	lost := boundClaim("lost", "local", "gone")
	lost.Status.Phase = api.ClaimLost
	foreign := claim("eph-scratch", "local", "1Gi")
	ephemeral := podWithClaims("eph")
	ephemeral.Spec.Volumes = []api.Volume{{Name: "scratch", VolumeSource: api.VolumeSource{Ephemeral: []byte(`{"volumeClaimTemplate":{}}`)}}}
	ephemeralMissing := podWithClaims("other")
	ephemeralMissing.Spec.Volumes = ephemeral.Spec.Volumes
	unresolvable := fmt.Sprint(framework.UnschedulableAndUnresolvable)
	cases := []struct {
		name string
		pod  *api.Pod
		want string
	}{
		{"no claims", schedtest.Pod("ns", "plain", "", ""), "skip"},
		{"missing claim", podWithClaims("p", "data"), unresolvable + ` persistentvolumeclaim "data" not found`},
		{"claim being deleted", podWithClaims("p", "deleting"), unresolvable + ` persistentvolumeclaim "deleting" is being deleted`},
		{"claim lost", podWithClaims("p", "lost"), unresolvable + ` persistentvolumeclaim "lost" bound to non-existent persistentvolume "gone"`},
		{"unbound immediate claim", podWithClaims("p", "imm"), unresolvable + " pod has unbound immediate PersistentVolumeClaims"},
		{"claim without class binds immediately", podWithClaims("p", "noclass"), unresolvable + " pod has unbound immediate PersistentVolumeClaims"},
		{"ephemeral claim not yet made", ephemeralMissing, unresolvable + ` waiting for ephemeral volume controller to create the persistentvolumeclaim "other-scratch"`},
		{"ephemeral claim of another owner", ephemeral, unresolvable + " PVC ns/eph-scratch was not created for pod ns/eph (pod is not owner)"},
	}
	w := newWorld()
	noClass := claim("noclass", "", "1Gi")
	noClass.Spec.StorageClassName = nil
	w.add(class("local", "rancher.io/local-path", wffc), class("standard", "example.com/x", immediate),
		deleting, lost, claim("imm", "standard", "1Gi"), noClass, foreign)
	p := newPlugin(w)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := filter(t, p, framework.NewCycleState(), tc.pod)["prefilter"]
			if got != tc.want {
				t.Errorf("PreFilter = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	t.Parallel()
	a := schedtest.Node("node-a", "1", "1Gi", 10)
	b := schedtest.WithLabels(schedtest.Node("node-b", "1", "1Gi", 10), "zone", "z2")
	selectedB := claim("selected", "local", "1Gi")
	selectedB.Annotations = map[string]string{storagevolume.AnnSelectedNode: "node-b"}
	cases := []struct {
		name string
		pod  *api.Pod
		want map[string]string
	}{
		{"bound volume pinned to node-b", podWithClaims("p", "bound-b"), map[string]string{"node-a": ErrReasonNodeConflict, "node-b": ""}},
		{"bound volume without affinity", podWithClaims("p", "bound-any"), map[string]string{"node-a": "", "node-b": ""}},
		{"bound to a missing volume", podWithClaims("p", "bound-missing"), map[string]string{"node-a": ErrReasonPVNotExist, "node-b": ErrReasonPVNotExist}},
		{"wffc: an available local volume on node-a only", podWithClaims("p", "static"), map[string]string{"node-a": "", "node-b": ErrReasonBindConflict}},
		{"wffc: too big for the volume", podWithClaims("p", "static-big"), map[string]string{"node-a": ErrReasonBindConflict, "node-b": ErrReasonBindConflict}},
		{"wffc: a provisioner serves every node", podWithClaims("p", "dynamic"), map[string]string{"node-a": "", "node-b": ""}},
		{"wffc: allowed topologies", podWithClaims("p", "zoned"), map[string]string{"node-a": ErrReasonBindConflict, "node-b": ""}},
		{"wffc: selected-node fixes the node", podWithClaims("p", "selected"), map[string]string{"node-a": ErrReasonBindConflict, "node-b": ""}},
		{"bound pinned plus unmatched static", podWithClaims("p", "bound-b", "static"), map[string]string{"node-a": ErrReasonNodeConflict, "node-b": ErrReasonBindConflict}},
	}
	w := newWorld()
	zoned := class("zoned", "rancher.io/local-path", wffc)
	zoned.AllowedTopologies = []api.TopologySelectorTerm{{MatchLabelExpressions: []api.TopologySelectorLabelRequirement{{Key: "zone", Values: []string{"z2"}}}}}
	w.add(a, b,
		class("manual", storagevolume.NotSupportedProvisioner, wffc), class("local", "rancher.io/local-path", wffc), zoned,
		boundVolume(volume("pv-b", "manual", "1Gi", "node-b"), "bound-b"), boundVolume(volume("pv-any", "manual", "1Gi", ""), "bound-any"), volume("pv-a", "manual", "1Gi", "node-a"),
		boundClaim("bound-b", "manual", "pv-b"), boundClaim("bound-any", "manual", "pv-any"), boundClaim("bound-missing", "manual", "nope"),
		claim("static", "manual", "1Gi"), claim("static-big", "manual", "5Gi"), claim("dynamic", "local", "1Gi"), claim("zoned", "zoned", "1Gi"), selectedB)
	p := newPlugin(w)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := filter(t, p, framework.NewCycleState(), tc.pod, a, b)
			for n, want := range tc.want {
				if got[n] != want {
					t.Errorf("%s: %q, want %q", n, got[n], want)
				}
			}
		})
	}
}

// schedule runs the scheduling cycle's part of the plugin (PreFilter,
// Filter, Reserve) for pod on node, and returns the assumed pod.
func schedule(t *testing.T, p *Plugin, state *framework.CycleState, pod *api.Pod, node *api.Node) *api.Pod {
	t.Helper()
	if got := filter(t, p, state, pod, node)[node.Name]; got != "" {
		t.Fatalf("Filter on %s: %q", node.Name, got)
	}
	if st := p.Reserve(t.Context(), state, pod, node.Name); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st.AsError())
	}
	assumed := api.DeepCopy(pod)
	assumed.Spec.NodeName = node.Name
	return assumed
}

func TestStaticBinding(t *testing.T) {
	t.Parallel()
	w := newWorld()
	a := schedtest.Node("node-a", "1", "1Gi", 10)
	pod := podWithClaims("p", "data")
	w.add(a, pod, class("manual", storagevolume.NotSupportedProvisioner, wffc), volume("pv-a", "manual", "1Gi", "node-a"), claim("data", "manual", "1Gi"), claim("other", "manual", "1Gi"))
	p := newPlugin(w)
	state := framework.NewCycleState()
	assumed := schedule(t, p, state, pod, a)

	// The volume is assumed taken: a second pod's claim finds none.
	if got := filter(t, p, framework.NewCycleState(), podWithClaims("q", "other"), a)["node-a"]; got != ErrReasonBindConflict {
		t.Errorf("second pod on node-a: %q, want %q (the assumed volume offered twice)", got, ErrReasonBindConflict)
	}

	// The PV controller completes the binding once claimRef is written.
	done := make(chan *framework.Status, 1)
	go func() { done <- p.PreBind(t.Context(), state, assumed, "node-a") }()
	waitFor(t, func() bool {
		pv, _ := w.volumes.GetByKey("pv-a")
		return pv.Spec.ClaimRef != nil
	})
	pv, _ := w.volumes.GetByKey("pv-a")
	if pv.Spec.ClaimRef.UID != "uid-data" || pv.Annotations[storagevolume.AnnBoundByController] != "yes" {
		t.Errorf("written volume: claimRef %+v, annotations %v", pv.Spec.ClaimRef, pv.Annotations)
	}
	select {
	case st := <-done:
		t.Fatalf("PreBind returned before the claim was bound: %v", st.AsError())
	case <-time.After(50 * time.Millisecond):
	}
	w.changeClaim("ns/data", func(c *api.PersistentVolumeClaim) {
		c.Spec.VolumeName = "pv-a"
		c.Annotations = map[string]string{storagevolume.AnnBindCompleted: "yes"}
	})
	if st := <-done; !st.IsSuccess() {
		t.Fatalf("PreBind: %v", st.AsError())
	}
	if want := []string{"update pv pv-a claimRef=ns/data"}; strings.Join(w.writes, ";") != strings.Join(want, ";") {
		t.Errorf("writes %q, want %q", w.writes, want)
	}
}

func TestDynamicProvisioning(t *testing.T) {
	t.Parallel()
	b := schedtest.Node("node-b", "1", "1Gi", 10)
	t.Run("provisioned", func(t *testing.T) {
		t.Parallel()
		w := newWorld()
		pod := podWithClaims("p", "data")
		w.add(b, pod, class("local", "rancher.io/local-path", wffc), claim("data", "local", "1Gi"))
		p := newPlugin(w)
		state := framework.NewCycleState()
		assumed := schedule(t, p, state, pod, b)
		done := make(chan *framework.Status, 1)
		go func() { done <- p.PreBind(t.Context(), state, assumed, "node-b") }()
		waitFor(t, func() bool {
			c, _ := w.claims.GetByKey("ns/data")
			return c.Annotations[storagevolume.AnnSelectedNode] == "node-b"
		})
		// The provisioner makes a volume on node-b; the PV controller binds.
		w.add(volume("pvc-uid-data", "local", "1Gi", "node-b"))
		w.changeClaim("ns/data", func(c *api.PersistentVolumeClaim) {
			c.Spec.VolumeName = "pvc-uid-data"
			c.Annotations[storagevolume.AnnBindCompleted] = "yes"
		})
		if st := <-done; !st.IsSuccess() {
			t.Fatalf("PreBind: %v", st.AsError())
		}
	})
	t.Run("provisioner gives up", func(t *testing.T) {
		t.Parallel()
		w := newWorld()
		pod := podWithClaims("p", "data")
		w.add(b, pod, class("local", "rancher.io/local-path", wffc), claim("data", "local", "1Gi"))
		p := newPlugin(w)
		state := framework.NewCycleState()
		assumed := schedule(t, p, state, pod, b)
		done := make(chan *framework.Status, 1)
		go func() { done <- p.PreBind(t.Context(), state, assumed, "node-b") }()
		waitFor(t, func() bool {
			c, _ := w.claims.GetByKey("ns/data")
			return c.Annotations[storagevolume.AnnSelectedNode] != ""
		})
		w.changeClaim("ns/data", func(c *api.PersistentVolumeClaim) { delete(c.Annotations, storagevolume.AnnSelectedNode) })
		st := <-done
		if want := `binding volumes: provisioning failed for PVC "data"`; st.IsSuccess() || st.AsError().Error() != want {
			t.Fatalf("PreBind = %v, want %q", st.AsError(), want)
		}
		p.Unreserve(t.Context(), state, assumed, "node-b")
		// The claim is free again for any node.
		if got := filter(t, p, framework.NewCycleState(), pod, b)["node-b"]; got != "" {
			t.Errorf("after Unreserve: %q", got)
		}
	})
	t.Run("times out", func(t *testing.T) {
		t.Parallel()
		w := newWorld()
		pod := podWithClaims("p", "data")
		w.add(b, pod, class("local", "rancher.io/local-path", wffc), claim("data", "local", "1Gi"))
		p := newPlugin(w)
		p.binder.bindTimeout = 30 * time.Millisecond
		state := framework.NewCycleState()
		assumed := schedule(t, p, state, pod, b)
		st := p.PreBind(t.Context(), state, assumed, "node-b")
		if want := "binding volumes: context deadline exceeded"; st.IsSuccess() || st.AsError().Error() != want {
			t.Fatalf("PreBind = %v, want %q", st.AsError(), want)
		}
	})
}

func TestUnreserveForgetsTheAssumedVolume(t *testing.T) {
	t.Parallel()
	w := newWorld()
	a := schedtest.Node("node-a", "1", "1Gi", 10)
	pod := podWithClaims("p", "data")
	w.add(a, pod, class("manual", storagevolume.NotSupportedProvisioner, wffc), volume("pv-a", "manual", "1Gi", "node-a"), claim("data", "manual", "1Gi"), claim("other", "manual", "1Gi"))
	p := newPlugin(w)
	state := framework.NewCycleState()
	assumed := schedule(t, p, state, pod, a)
	p.Unreserve(t.Context(), state, assumed, "node-a")
	if got := filter(t, p, framework.NewCycleState(), podWithClaims("q", "other"), a)["node-a"]; got != "" {
		t.Errorf("after Unreserve the volume is still taken: %q", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
