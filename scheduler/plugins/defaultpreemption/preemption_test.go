package defaultpreemption

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins/interpodaffinity"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeaffinity"
	"github.com/minik8s/minik8s/scheduler/plugins/noderesources"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

const fakeCPU api.ResourceName = "example.com/fakecpu"

// node returns a node with n units of fakeCPU.
func node(name string, n int) *api.Node {
	nd := schedtest.Node(name, "8", "16Gi", 110)
	nd.Status.Allocatable[fakeCPU] = resource.MustParse(fmt.Sprint(n))
	return nd
}

// pod returns a pod of priority prio requesting n units of fakeCPU, started
// age ago (bound to nodeName when not empty).
func pod(name string, prio int32, n int, nodeName string, age time.Duration) *api.Pod {
	p := schedtest.Pod("ns", name, "", "")
	p.Spec.Priority = &prio
	p.Spec.SchedulerName = "default-scheduler"
	p.Spec.Containers[0].Resources.Requests[fakeCPU] = resource.MustParse(fmt.Sprint(n))
	p.Spec.NodeName = nodeName
	if nodeName != "" {
		t := api.NewTime(time.Now().Add(-age))
		p.Status.StartTime = &t
	}
	return p
}

// handle is a Handle over fixed nodes, filtering with NodeResourcesFit and
// NodeAffinity and counting the nominated pods it is given.
type handle struct {
	nodes     schedtest.Lister
	fwk       *framework.Framework
	pdbs      []*api.PodDisruptionBudget
	nominated map[string][]*api.Pod
}

func newHandle(nodes ...*framework.NodeInfo) *handle {
	h := &handle{nodes: nodes, nominated: map[string][]*api.Pod{}}
	h.fwk = framework.New([]framework.WeightedPlugin{{Plugin: nodeaffinity.Plugin{}}, {Plugin: noderesources.Fit{}}, {Plugin: interpodaffinity.New(h)}}, 4)
	h.fwk.SetPodNominator(h)
	return h
}

func (h *handle) SnapshotSharedLister() framework.SharedLister { return h.nodes }
func (h *handle) Parallelizer() framework.Parallelizer         { return h.fwk.Parallelizer() }
func (h *handle) RunFilterPluginsWithNominatedPods(ctx context.Context, st *framework.CycleState, p *api.Pod, n *framework.NodeInfo) *framework.Status {
	return h.fwk.RunFilterPluginsWithNominatedPods(ctx, st, p, n)
}
func (h *handle) RunPreFilterExtensionAddPod(ctx context.Context, st *framework.CycleState, p *api.Pod, pi *framework.PodInfo, n *framework.NodeInfo) *framework.Status {
	return h.fwk.RunPreFilterExtensionAddPod(ctx, st, p, pi, n)
}
func (h *handle) RunPreFilterExtensionRemovePod(ctx context.Context, st *framework.CycleState, p *api.Pod, pi *framework.PodInfo, n *framework.NodeInfo) *framework.Status {
	return h.fwk.RunPreFilterExtensionRemovePod(ctx, st, p, pi, n)
}
func (h *handle) PodDisruptionBudgets() []*api.PodDisruptionBudget { return h.pdbs }
func (h *handle) NominatedPodsForNode(n string) []*api.Pod         { return h.nominated[n] }
func (h *handle) NominatedNode(p *api.Pod) string {
	for n, pods := range h.nominated {
		for _, q := range pods {
			if q.UID == p.UID {
				return n
			}
		}
	}
	return ""
}

// evictor records what the plugin asks of the API.
type evictor struct {
	mu        sync.Mutex
	preempted []string
	cleared   []string
}

func (e *evictor) Preempt(_ context.Context, _, victim *api.Pod, node string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.preempted = append(e.preempted, victim.Name+"@"+node)
	return nil
}

func (e *evictor) ClearNomination(_ context.Context, p *api.Pod) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cleared = append(e.cleared, p.Name)
	return nil
}

// statuses runs the filters on every node, as the scheduling cycle does
// before PostFilter.
func statuses(t *testing.T, h *handle, p *api.Pod) (*framework.CycleState, map[string]*framework.Status) {
	t.Helper()
	state := framework.NewCycleState()
	if st := h.fwk.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatalf("prefilter: %v", st.Message())
	}
	m := map[string]*framework.Status{}
	for _, ni := range h.nodes {
		if st := h.fwk.RunFilterPluginsWithNominatedPods(context.Background(), state, p, ni); !st.IsSuccess() {
			m[ni.Name] = st
		}
	}
	return state, m
}

func newPlugin(h *handle, e *evictor) *Plugin {
	pl := New(h, e, nil, nil)
	pl.offset = func(int) int { return 0 }
	return pl
}

func names(pods []*api.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.Name)
	}
	return strings.Join(s, ",")
}

// TestSelectVictimsOnNodeMinimal is the PreemptionExecutionPath spec's node:
// 200 + 300 + 450 of 1000 used by priorities 1, 2, 3; a priority-4 pod
// asking 500 evicts the priority-1 and priority-2 pods and keeps the
// priority-3 one (reprieved first, as the most important).
func TestSelectVictimsOnNodeMinimal(t *testing.T) {
	t.Parallel()
	ni := schedtest.NodeInfo(node("n1", 1000),
		pod("p1", 1, 200, "n1", time.Minute), pod("p2", 2, 300, "n1", time.Minute), pod("p3", 3, 450, "n1", time.Minute))
	h := newHandle(ni)
	p4 := pod("p4", 4, 500, "", 0)
	state, _ := statuses(t, h, p4)
	victims, violations, st := SelectVictimsOnNode(context.Background(), h, state, p4, ni.Clone(), nil)
	if !st.IsSuccess() {
		t.Fatalf("status %v", st.Message())
	}
	if got := names(victims); got != "p2,p1" || violations != 0 {
		t.Errorf("victims %q (%d PDB violations), want \"p2,p1\" (0)", got, violations)
	}
}

func TestSelectVictimsOnNodeRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		pods    []*api.Pod
		want    framework.Code
		wantMsg string
	}{
		{"equal priority is never a victim", []*api.Pod{pod("same", 10, 5, "n1", time.Minute)}, framework.UnschedulableAndUnresolvable, msgNoVictims},
		{"higher priority is never a victim", []*api.Pod{pod("higher", 11, 5, "n1", time.Minute)}, framework.UnschedulableAndUnresolvable, msgNoVictims},
		{"evicting every lower pod is not enough", []*api.Pod{pod("low", 1, 2, "n1", time.Minute), pod("same", 10, 3, "n1", time.Minute)}, framework.Unschedulable, "Insufficient example.com/fakecpu"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ni := schedtest.NodeInfo(node("n1", 5), tc.pods...)
			h := newHandle(ni)
			p := pod("preemptor", 10, 4, "", 0)
			state, _ := statuses(t, h, p)
			victims, _, st := SelectVictimsOnNode(context.Background(), h, state, p, ni.Clone(), nil)
			if st.IsSuccess() || st.Code != tc.want || st.Message() != tc.wantMsg {
				t.Errorf("victims %q, status %+v; want code %d %q", names(victims), st, tc.want, tc.wantMsg)
			}
		})
	}
}

func pdb(name string, allowed int32, match map[string]string) *api.PodDisruptionBudget {
	return &api.PodDisruptionBudget{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       api.PodDisruptionBudgetSpec{Selector: &api.LabelSelector{MatchLabels: match}},
		Status:     api.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

func labeled(p *api.Pod, kv ...string) *api.Pod {
	p.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Labels[kv[i]] = kv[i+1]
	}
	return p
}

// TestPostFilterRespectsPDB: evicting the pod on n1 would break its PDB,
// evicting the one on n2 would not; n2 is chosen although its victim has
// the higher priority. With n2 gone, the PDB-violating n1 is still chosen
// (kube preempts through a PDB when nothing else helps).
func TestPostFilterRespectsPDB(t *testing.T) {
	t.Parallel()
	guarded := labeled(pod("guarded", 1, 4, "n1", time.Minute), "app", "db")
	free := labeled(pod("free", 5, 4, "n2", time.Minute), "app", "web")
	pdbs := []*api.PodDisruptionBudget{pdb("db", 0, map[string]string{"app": "db"}), pdb("web", 1, map[string]string{"app": "web"})}

	h := newHandle(schedtest.NodeInfo(node("n1", 4), guarded), schedtest.NodeInfo(node("n2", 4), free))
	h.pdbs = pdbs
	e := &evictor{}
	p := pod("preemptor", 10, 4, "", 0)
	state, m := statuses(t, h, p)
	res, st := newPlugin(h, e).PostFilter(context.Background(), state, p, m)
	if !st.IsSuccess() || res == nil || res.NominatedNodeName != "n2" {
		t.Fatalf("result %+v status %+v; want n2 nominated", res, st)
	}
	if got := strings.Join(e.preempted, ","); got != "free@n2" {
		t.Errorf("preempted %q, want free@n2", got)
	}
	if want := "preemption: found a potential placement for pod on node n2, preempting 1 victims"; st.Message() != want {
		t.Errorf("message %q, want %q", st.Message(), want)
	}

	h = newHandle(schedtest.NodeInfo(node("n1", 4), guarded))
	h.pdbs = pdbs
	e = &evictor{}
	state, m = statuses(t, h, p)
	res, st = newPlugin(h, e).PostFilter(context.Background(), state, p, m)
	if !st.IsSuccess() || res.NominatedNodeName != "n1" || strings.Join(e.preempted, ",") != "guarded@n1" {
		t.Errorf("only a PDB-violating candidate: result %+v status %+v preempted %v; want guarded@n1", res, st, e.preempted)
	}
}

// TestSelectVictimsReprievesPDBViolatorsFirst: two victims fit back one at
// a time; the one whose eviction breaks a PDB is reprieved although the
// other has the higher priority.
func TestSelectVictimsReprievesPDBViolatorsFirst(t *testing.T) {
	t.Parallel()
	ni := schedtest.NodeInfo(node("n1", 6),
		labeled(pod("guarded", 1, 2, "n1", time.Minute), "app", "db"),
		pod("plain", 2, 2, "n1", time.Minute))
	h := newHandle(ni)
	p := pod("preemptor", 10, 4, "", 0)
	state, _ := statuses(t, h, p)
	victims, violations, st := SelectVictimsOnNode(context.Background(), h, state, p, ni.Clone(), []*api.PodDisruptionBudget{pdb("db", 0, map[string]string{"app": "db"})})
	if !st.IsSuccess() || names(victims) != "plain" || violations != 0 {
		t.Errorf("victims %q violations %d status %+v; want plain, 0", names(victims), violations, st)
	}
}

func TestPickOneNodeForPreemption(t *testing.T) {
	t.Parallel()
	old := pod("old", 5, 1, "x", time.Hour)
	young := pod("young", 5, 1, "x", time.Minute)
	c := func(node string, pdb int, victims ...*api.Pod) *Candidate {
		return &Candidate{Node: node, Victims: victims, NumPDBViolations: pdb}
	}
	cases := []struct {
		name       string
		candidates []*Candidate
		want       string
	}{
		{"fewest PDB violations", []*Candidate{c("a", 1, pod("v", 1, 1, "a", 0)), c("b", 0, pod("v", 9, 1, "b", 0))}, "b"},
		{"lowest highest priority", []*Candidate{c("a", 0, pod("v", 7, 1, "a", 0)), c("b", 0, pod("v", 3, 1, "b", 0), pod("w", 3, 1, "b", 0))}, "b"},
		{"smallest priority sum", []*Candidate{c("a", 0, pod("v", 5, 1, "a", 0), pod("w", 4, 1, "a", 0)), c("b", 0, pod("v", 5, 1, "b", 0), pod("w", 1, 1, "b", 0))}, "b"},
		{"fewest victims", []*Candidate{c("a", 0, pod("v", 5, 1, "a", 0), pod("w", -5, 1, "a", 0)), c("b", 0, pod("v", 5, 1, "b", 0))}, "b"},
		{"latest start", []*Candidate{c("a", 0, old), c("b", 0, young)}, "b"},
		{"first on full tie", []*Candidate{c("a", 0, old), c("b", 0, old)}, "a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PickOneNodeForPreemption(tc.candidates); got.Node != tc.want {
				t.Errorf("picked %s, want %s", got.Node, tc.want)
			}
		})
	}
}

// TestPostFilterBasicPreemptionSpec is the conformance spec's cluster: each
// node has 5 of scheduling.k8s.io/foo and two pods asking 2; the first pod
// of the first node has low priority, all others medium. A high-priority
// pod asking 2 evicts the low one only.
func TestPostFilterBasicPreemptionSpec(t *testing.T) {
	t.Parallel()
	foo := api.ResourceName("scheduling.k8s.io/foo")
	mk := func(name string, prio int32, nodeName string) *api.Pod {
		p := pod(name, prio, 0, nodeName, time.Minute)
		p.Spec.Containers[0].Resources.Requests = api.ResourceList{foo: resource.MustParse("2")}
		return p
	}
	var nodes []*framework.NodeInfo
	for i := range 2 {
		n := schedtest.Node(fmt.Sprintf("n%d", i), "8", "16Gi", 110)
		n.Status.Allocatable[foo] = resource.MustParse("5")
		prio := int32(100)
		if i == 0 {
			prio = 1
		}
		nodes = append(nodes, schedtest.NodeInfo(n, mk(fmt.Sprintf("pod%d-0", i), prio, n.Name), mk(fmt.Sprintf("pod%d-1", i), 100, n.Name)))
	}
	h := newHandle(nodes...)
	e := &evictor{}
	p := mk("preemptor-pod", 1000, "")
	state, m := statuses(t, h, p)
	if len(m) != 2 {
		t.Fatalf("the preemptor fits somewhere already: %v", m)
	}
	res, st := newPlugin(h, e).PostFilter(context.Background(), state, p, m)
	if !st.IsSuccess() || res.NominatedNodeName != "n0" || strings.Join(e.preempted, ",") != "pod0-0@n0" {
		t.Errorf("result %+v status %+v preempted %v; want pod0-0@n0", res, st, e.preempted)
	}
}

func TestPostFilterNotEligible(t *testing.T) {
	t.Parallel()
	never := api.PreemptNever
	terminating := pod("victim", 1, 4, "n1", time.Minute)
	now := api.Now()
	terminating.DeletionTimestamp = &now
	terminating.Status.Conditions = []api.PodCondition{{Type: api.DisruptionTarget, Status: api.ConditionTrue, Reason: api.PodReasonPreemptionByScheduler}}

	cases := []struct {
		name    string
		pod     func() *api.Pod
		node    *api.Pod
		wantMsg string
		// clears says the result clears the nomination (non-nil, no node).
		clears bool
	}{
		{"preemptionPolicy Never", func() *api.Pod { p := pod("p", 10, 4, "", 0); p.Spec.PreemptionPolicy = &never; return p },
			pod("low", 1, 4, "n1", time.Minute), "preemption: " + msgPolicyNever, false},
		{"victim still terminating on the nominated node", func() *api.Pod { p := pod("p", 10, 4, "", 0); p.Status.NominatedNodeName = "n1"; return p },
			terminating, "preemption: " + msgTerminatingOnNode, false},
		{"no lower-priority pod anywhere", func() *api.Pod { return pod("p", 10, 4, "", 0) },
			pod("same", 10, 4, "n1", time.Minute), "preemption: 0/1 nodes are available: 1 " + msgNoVictims + ".", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandle(schedtest.NodeInfo(node("n1", 4), tc.node))
			e := &evictor{}
			p := tc.pod()
			state, m := statuses(t, h, p)
			res, st := newPlugin(h, e).PostFilter(context.Background(), state, p, m)
			if st.IsSuccess() || st.Code != framework.Unschedulable || st.Message() != tc.wantMsg {
				t.Errorf("status %+v, want Unschedulable %q", st, tc.wantMsg)
			}
			if (res != nil && res.NominatedNodeName == "") != tc.clears {
				t.Errorf("result %+v, clears nomination = %v", res, tc.clears)
			}
			if len(e.preempted) > 0 {
				t.Errorf("preempted %v", e.preempted)
			}
		})
	}
}

// TestNominatedPodsHoldTheirRoom: a pod nominated to the node with higher
// priority takes the room; a lower-priority pending pod does not fit, and
// cannot preempt for it either.
func TestNominatedPodsHoldTheirRoom(t *testing.T) {
	t.Parallel()
	ni := schedtest.NodeInfo(node("n1", 1000), pod("p3", 3, 450, "n1", time.Minute))
	h := newHandle(ni)
	h.nominated["n1"] = []*api.Pod{pod("p4", 4, 500, "", 0)}
	low := pod("again", 1, 200, "", 0)
	state, m := statuses(t, h, low)
	if st := m["n1"]; st == nil || st.Message() != "Insufficient example.com/fakecpu" {
		t.Fatalf("low-priority pod on a node with a nominated pod: %+v", st)
	}
	delete(h.nominated, "n1")
	if _, m := statuses(t, h, low); len(m) != 0 {
		t.Fatalf("without the nomination the pod should fit: %v", m)
	}
	e := &evictor{}
	if _, st := newPlugin(h, e).PostFilter(context.Background(), state, low, map[string]*framework.Status{"n1": framework.NewStatus(framework.Unschedulable, "Insufficient example.com/fakecpu")}); st.IsSuccess() || len(e.preempted) > 0 {
		t.Errorf("a pod of priority 1 preempted: %+v %v", st, e.preempted)
	}
}

// TestActuateClearsLowerNominations: preempting on a node clears the
// nominations of lower-priority pods there, not of higher ones.
func TestActuateClearsLowerNominations(t *testing.T) {
	t.Parallel()
	ni := schedtest.NodeInfo(node("n1", 4), pod("low", 1, 4, "n1", time.Minute))
	h := newHandle(ni)
	lowNom := pod("nominated-low", 2, 0, "", 0)
	lowNom.Status.NominatedNodeName = "n1"
	highNom := pod("nominated-high", 20, 0, "", 0)
	highNom.Status.NominatedNodeName = "n1"
	h.nominated["n1"] = []*api.Pod{lowNom, highNom}
	e := &evictor{}
	p := pod("p", 10, 4, "", 0)
	state, m := statuses(t, h, p)
	if _, st := newPlugin(h, e).PostFilter(context.Background(), state, p, m); !st.IsSuccess() {
		t.Fatalf("status %+v", st)
	}
	if got := strings.Join(e.cleared, ","); got != "nominated-low" {
		t.Errorf("cleared %q, want nominated-low", got)
	}
}

// TestPreemptionResolvesAntiAffinity: the only obstacle on the node is a
// lower-priority pod whose anti-affinity rejects the preemptor; it is
// preempted (the PreFilter state follows its removal), while a
// higher-priority one with the same term would not be.
func TestPreemptionResolvesAntiAffinity(t *testing.T) {
	t.Parallel()
	anti := func(p *api.Pod) *api.Pod {
		p.Spec.Affinity = &api.Affinity{PodAntiAffinity: &api.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []api.PodAffinityTerm{{
			LabelSelector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: api.LabelHostname,
		}}}}
		return p
	}
	for _, tc := range []struct {
		name     string
		prio     int32
		preempts bool
	}{{"lower priority", 1, true}, {"higher priority", 20, false}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandle(schedtest.NodeInfo(node("n1", 10), anti(pod("loner", tc.prio, 1, "n1", time.Minute))))
			p := labeled(pod("web", 10, 1, "", 0), "app", "web")
			state, m := statuses(t, h, p)
			if st := m["n1"]; st == nil || st.Code != framework.Unschedulable {
				t.Fatalf("filter status %+v, want the existing pod's anti-affinity", st)
			}
			e := &evictor{}
			res, st := newPlugin(h, e).PostFilter(context.Background(), state, p, m)
			if got := strings.Join(e.preempted, ","); st.IsSuccess() != tc.preempts || (tc.preempts && (got != "loner@n1" || res.NominatedNodeName != "n1")) {
				t.Errorf("status %+v result %+v preempted %q", st, res, got)
			}
		})
	}
}
