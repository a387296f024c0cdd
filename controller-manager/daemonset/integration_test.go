package daemonset_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

const timeout = 60 * time.Second

type env struct {
	*controllermanagertest.Cluster
	ns string
}

// start runs the daemonset controller and a simulated kubelet, which
// binds each daemon pod to the node its metadata.name affinity names (as
// the scheduler would) and runs it.
func start(t testing.TB) *env {
	cl := controllermanagertest.Start(t, []string{"daemonset"}, nil)
	controllermanagertest.RunKubelet(t, cl.Client, controllermanagertest.KubeletOptions{Nodes: 4})
	e := &env{cl, "daemons"}
	cl.Namespace(e.ns)
	return e
}

func pinnedNode(p *api.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// podsByNode returns the live pods by node.
func (e *env) podsByNode() map[string][]*api.Pod {
	e.T.Helper()
	l, err := client.Resource[api.Pod](e.Client).Namespace(e.ns).List(context.Background(), client.ListOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	out := map[string][]*api.Pod{}
	for i := range l.Items {
		if p := &l.Items[i]; p.DeletionTimestamp == nil {
			out[pinnedNode(p)] = append(out[pinnedNode(p)], p)
		}
	}
	return out
}

func (e *env) ds() *api.DaemonSet {
	e.T.Helper()
	ds, err := client.Resource[api.DaemonSet](e.Client).Namespace(e.ns).Get(context.Background(), "agent")
	if err != nil {
		e.T.Fatal(err)
	}
	return ds
}

func (e *env) updateNode(name string, mutate func(*api.Node)) {
	e.T.Helper()
	nc := client.Resource[api.Node](e.Client)
	for i := 0; ; i++ {
		n, err := nc.Get(context.Background(), name)
		if err != nil {
			e.T.Fatal(err)
		}
		mutate(n)
		if _, err = nc.Update(context.Background(), n); err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 10 {
			e.T.Fatal(err)
		}
	}
}

// waitNodes waits until exactly nodes run one pod each, all Ready, and
// the status says so.
func (e *env) waitNodes(nodes ...string) {
	e.T.Helper()
	e.Eventually(timeout, fmt.Sprintf("one ready pod on each of %v", nodes), func() (bool, error) {
		by := e.podsByNode()
		var got []string
		for n, pods := range by {
			got = append(got, fmt.Sprintf("%s:%d", n, len(pods)))
		}
		slices.Sort(got)
		if len(by) != len(nodes) {
			return false, fmt.Errorf("pods by node %v", got)
		}
		for _, n := range nodes {
			if len(by[n]) != 1 || by[n][0].Spec.NodeName != n || by[n][0].Status.Phase != api.PodRunning {
				return false, fmt.Errorf("pods by node %v", got)
			}
		}
		ds := e.ds()
		st := ds.Status
		want := int32(len(nodes))
		return st.DesiredNumberScheduled == want && st.CurrentNumberScheduled == want && st.NumberReady == want &&
			st.NumberAvailable == want && st.UpdatedNumberScheduled == want && st.NumberUnavailable == 0 && st.NumberMisscheduled == 0 &&
			st.ObservedGeneration == ds.Generation, fmt.Errorf("status %+v", st)
	})
}

func TestDaemonSetFollowsNodes(t *testing.T) {
	e := start(t)
	e.StartNode("node-0", time.Second)
	e.StartNode("node-1", time.Second)
	e.StartNode("node-2", time.Second)
	e.updateNode("node-2", func(n *api.Node) {
		n.Spec.Taints = []api.Taint{{Key: "dedicated", Value: "db", Effect: api.TaintEffectNoSchedule}}
	})
	lbl := map[string]string{"app": "agent"}
	ds := &api.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: e.ns, Name: "agent"},
		Spec: api.DaemonSetSpec{Selector: &api.LabelSelector{MatchLabels: lbl},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec: api.PodSpec{NodeSelector: map[string]string{"agent": "yes"}, Containers: []api.Container{{Name: "a", Image: "agent:1"}}}}}}
	for _, n := range []string{"node-0", "node-1", "node-2"} {
		e.updateNode(n, func(n *api.Node) { n.Labels["agent"] = "yes" })
	}
	if _, err := client.Resource[api.DaemonSet](e.Client).Namespace(e.ns).Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	// The tainted node-2 gets none.
	e.waitNodes("node-0", "node-1")
	p := e.podsByNode()["node-0"][0]
	for _, want := range []api.Toleration{
		{Key: api.TaintNodeNotReady, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute},
		{Key: api.TaintNodeUnreachable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute},
		{Key: api.TaintNodeDiskPressure, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule},
		{Key: api.TaintNodeMemoryPressure, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule},
		{Key: api.TaintNodePIDPressure, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule},
		{Key: api.TaintNodeUnschedulable, Operator: api.TolerationOpExists, Effect: api.TaintEffectNoSchedule},
	} {
		if !slices.ContainsFunc(p.Spec.Tolerations, func(t api.Toleration) bool {
			return t.Key == want.Key && t.Operator == want.Operator && t.Effect == want.Effect && t.TolerationSeconds == nil
		}) {
			t.Errorf("pod tolerations %+v lack %+v", p.Spec.Tolerations, want)
		}
	}
	if p.Labels["controller-revision-hash"] == "" {
		t.Errorf("pod labels %v lack controller-revision-hash", p.Labels)
	}

	// A node that joins gets a pod; one whose label goes loses it.
	e.StartNode("node-3", time.Second)
	e.updateNode("node-3", func(n *api.Node) { n.Labels["agent"] = "yes" })
	e.waitNodes("node-0", "node-1", "node-3")
	e.updateNode("node-1", func(n *api.Node) { delete(n.Labels, "agent") })
	e.waitNodes("node-0", "node-3")
	// Tolerating the taint puts a pod on node-2.
	e.updateDS(func(ds *api.DaemonSet) {
		ds.Spec.Template.Spec.Tolerations = []api.Toleration{{Key: "dedicated", Operator: api.TolerationOpExists}}
	})
	e.waitNodes("node-0", "node-2", "node-3")
}

func (e *env) updateDS(mutate func(*api.DaemonSet)) {
	e.T.Helper()
	dc := client.Resource[api.DaemonSet](e.Client).Namespace(e.ns)
	for i := 0; ; i++ {
		ds := e.ds()
		mutate(ds)
		_, err := dc.Update(context.Background(), ds)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || i > 10 {
			e.T.Fatal(err)
		}
	}
}

func TestDaemonSetRollingUpdate(t *testing.T) {
	e := start(t)
	nodes := []string{"node-0", "node-1", "node-2", "node-3"}
	for _, n := range nodes {
		e.StartNode(n, time.Second)
	}
	lbl := map[string]string{"app": "agent"}
	ds := &api.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: e.ns, Name: "agent"},
		Spec: api.DaemonSetSpec{Selector: &api.LabelSelector{MatchLabels: lbl},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "a", Image: "agent:1"}}}}}}
	if _, err := client.Resource[api.DaemonSet](e.Client).Namespace(e.ns).Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.waitNodes(nodes...)
	e.updateDS(func(ds *api.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "agent:2" })
	// With maxUnavailable 1 (the default), at most one node lacks an
	// available pod at any time.
	maxDown := 0
	e.Eventually(timeout, "every node on agent:2", func() (bool, error) {
		by := e.podsByNode()
		down, updated := 0, 0
		for _, n := range nodes {
			pods := by[n]
			if len(pods) == 0 || pods[0].Status.Phase != api.PodRunning {
				down++
			} else if pods[0].Spec.Containers[0].Image == "agent:2" {
				updated++
			}
		}
		maxDown = max(maxDown, down)
		st := e.ds().Status
		return updated == 4 && st.UpdatedNumberScheduled == 4 && st.NumberAvailable == 4, fmt.Errorf("updated %d down %d status %+v", updated, down, st)
	})
	if maxDown > 1 {
		t.Errorf("%d nodes were down at once, maxUnavailable is 1", maxDown)
	}
	l, err := client.Resource[api.ControllerRevision](e.Client).Namespace(e.ns).List(context.Background(), client.ListOptions{})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("revisions %v, %v; want 2", l, err)
	}
}

func TestDaemonSetSurgeUpdate(t *testing.T) {
	e := start(t)
	nodes := []string{"node-0", "node-1", "node-2"}
	for _, n := range nodes {
		e.StartNode(n, time.Second)
	}
	lbl := map[string]string{"app": "agent"}
	surge, zero := api.FromInt(1), api.FromInt(0)
	ds := &api.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: e.ns, Name: "agent"},
		Spec: api.DaemonSetSpec{Selector: &api.LabelSelector{MatchLabels: lbl},
			UpdateStrategy: api.DaemonSetUpdateStrategy{Type: "RollingUpdate", RollingUpdate: &api.RollingUpdateDaemonSet{MaxSurge: &surge, MaxUnavailable: &zero}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "a", Image: "agent:1"}}}}}}
	if _, err := client.Resource[api.DaemonSet](e.Client).Namespace(e.ns).Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	e.waitNodes(nodes...)
	e.updateDS(func(ds *api.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "agent:2" })
	// A new pod starts beside the old one, which goes once it is
	// available: every node keeps a running pod, and at most one node has
	// a new pod not yet available beside its old one (kube's surge count:
	// a node whose new pod is available has its old pod deleted in the
	// same sync that surges the next node, so a list between the two
	// writes may see both doubled).
	maxDouble := 0
	e.Eventually(timeout, "every node on agent:2", func() (bool, error) {
		by := e.podsByNode()
		updated, double := 0, 0
		for _, n := range nodes {
			running := 0
			for _, p := range by[n] {
				if p.Status.Phase == api.PodRunning {
					running++
				}
			}
			if running == 0 {
				t.Errorf("node %s without a running pod during a surge update", n)
			}
			if len(by[n]) > 1 {
				for _, p := range by[n] {
					if p.Spec.Containers[0].Image == "agent:2" && p.Status.Phase != api.PodRunning {
						double++
					}
				}
			}
			if len(by[n]) == 1 && by[n][0].Spec.Containers[0].Image == "agent:2" {
				updated++
			}
		}
		maxDouble = max(maxDouble, double)
		st := e.ds().Status
		return updated == 3 && st.UpdatedNumberScheduled == 3 && st.NumberAvailable == 3, fmt.Errorf("updated %d status %+v", updated, st)
	})
	if maxDouble > 1 {
		t.Errorf("%d nodes surged at once, maxSurge is 1", maxDouble)
	}
}

// TestFailedDaemonPodsBackOff fails a node's daemon pod as soon as it
// exists, as a node rejecting it would: the controller deletes and
// replaces it after kube's failedPodsBackoff (1 s, 2 s, 4 s ...), with a
// FailedDaemonPod warning each time, not in a tight loop.
func TestFailedDaemonPodsBackOff(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"daemonset"}, nil)
	e := &env{cl, "crashing"}
	cl.Namespace(e.ns)
	e.StartNode("node-0", time.Second)
	lbl := map[string]string{"app": "agent"}
	ds := &api.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: e.ns, Name: "agent"},
		Spec: api.DaemonSetSpec{Selector: &api.LabelSelector{MatchLabels: lbl},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "a", Image: "agent:1"}}}}}}
	if _, err := client.Resource[api.DaemonSet](e.Client).Namespace(e.ns).Create(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	pods := client.Resource[api.Pod](e.Client).Namespace(e.ns)
	// Fail each new pod at once and note when it was replaced (when its
	// successor appeared).
	var created []time.Time
	failed := map[string]bool{}
	deadline := time.Now().Add(9 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range e.podsByNode()["node-0"] {
			if failed[p.Name] || p.Status.Phase == api.PodFailed {
				continue
			}
			created = append(created, time.Now())
			p.Status.Phase = api.PodFailed
			if _, err := pods.UpdateStatus(context.Background(), p); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				t.Fatal(err)
			}
			failed[p.Name] = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	// First pod, then replacements 0 s (no back-off yet), 1 s, 2 s, 4 s
	// after the previous one: 5 pods in 9 s (a tight loop would make
	// hundreds); each gap at least its back-off.
	if len(created) < 4 || len(created) > 5 {
		t.Fatalf("%d pods in 9 s of failures (seen at %v)", len(created), created)
	}
	for i, want := range []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second} {
		if i+2 >= len(created) {
			break
		}
		if gap := created[i+2].Sub(created[i+1]); gap < want-100*time.Millisecond {
			t.Errorf("replacement %d came %s after the previous one, want at least %s", i+2, gap, want)
		}
	}
	var warnings int
	l, err := client.Resource[api.Event](e.Client).Namespace(e.ns).List(context.Background(), client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range l.Items {
		if ev.Reason == "FailedDaemonPod" && ev.Type == api.EventTypeWarning && strings.HasPrefix(ev.Message, "Found failed daemon pod crashing/agent-") &&
			strings.HasSuffix(ev.Message, " on node node-0, will try to kill it") {
			warnings += int(max(ev.Count, 1))
		}
	}
	if warnings != len(created)-1 && warnings != len(created) {
		t.Errorf("%d FailedDaemonPod warnings for %d failed pods", warnings, len(created))
	}
}
