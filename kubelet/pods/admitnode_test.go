package pods

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
)

// admitNode is a Node with allocatable cpu, memory, pods and any extra
// resources given as name, quantity pairs.
func admitNode(cpu string, pods int, extra ...string) *api.Node {
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: fakeNodeName, Labels: map[string]string{"kubernetes.io/hostname": fakeNodeName}},
		Spec: api.NodeSpec{PodCIDR: "10.88.0.0/24"}}
	n.Status.Allocatable = api.ResourceList{
		api.ResourceCPU:    resource.MustParse(cpu),
		api.ResourceMemory: resource.MustParse("4Gi"),
		api.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	for i := 0; i+1 < len(extra); i += 2 {
		n.Status.Allocatable[api.ResourceName(extra[i])] = resource.MustParse(extra[i+1])
	}
	n.Status.Capacity = n.Status.Allocatable
	return n
}

// requesting is a pod whose one container requests the name, quantity
// pairs.
func requesting(name string, kv ...string) *api.Pod {
	p := fakePod(name, api.Container{Name: "main"})
	if len(kv) > 0 {
		p.Spec.Containers[0].Resources.Requests = api.ResourceList{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Spec.Containers[0].Resources.Requests[api.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return p
}

func withHostPort(p *api.Pod, ip string, proto api.Protocol, port int32) *api.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, api.ContainerPort{ContainerPort: 8080, HostPort: port, HostIP: ip, Protocol: proto})
	return p
}

// TestAdmitOnNode checks the reasons and messages of kube's predicate
// admit handler.
func TestAdmitOnNode(t *testing.T) {
	tainted := func(effect api.TaintEffect) *api.Node {
		n := admitNode("2", 10)
		n.Spec.Taints = []api.Taint{{Key: "dedicated", Value: "x", Effect: effect}}
		return n
	}
	selecting := func(p *api.Pod) *api.Pod { p.Spec.NodeSelector = map[string]string{"disk": "ssd"}; return p }
	const affinityMsg = "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
	tests := []struct {
		name         string
		node         *api.Node
		others       []*api.Pod
		pod          *api.Pod
		reason, msg  string
		affinityOnly bool
	}{
		{name: "fits", node: admitNode("1", 10), others: []*api.Pod{requesting("a", "cpu", "500m")}, pod: requesting("p", "cpu", "500m")},
		{name: "cpu", node: admitNode("1", 10), others: []*api.Pod{requesting("a", "cpu", "100m")}, pod: requesting("p", "cpu", "1"),
			reason: "OutOfcpu", msg: "Node didn't have enough resource: cpu, requested: 1000, used: 100, capacity: 1000"},
		{name: "memory", node: admitNode("1", 10), pod: requesting("p", "memory", "5Gi"),
			reason: "OutOfmemory", msg: "Node didn't have enough resource: memory, requested: 5368709120, used: 0, capacity: 4294967296"},
		{name: "pods", node: admitNode("1", 1), others: []*api.Pod{requesting("a")}, pod: requesting("p"),
			reason: "OutOfpods", msg: "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"},
		{name: "extended resource", node: admitNode("1", 10, "example.com/foo", "3"), others: []*api.Pod{requesting("a", "example.com/foo", "2")},
			pod: requesting("p", "example.com/foo", "2"), reason: "OutOfexample.com/foo",
			msg: "Node didn't have enough resource: example.com/foo, requested: 2, used: 2, capacity: 3"},
		{name: "extended resource the node does not list", node: admitNode("1", 10), pod: requesting("p", "example.com/foo", "2")},
		{name: "only the first failure", node: admitNode("1", 10), pod: selecting(requesting("p", "cpu", "2")),
			reason: "OutOfcpu", msg: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000"},
		{name: "status not reported yet", node: &api.Node{ObjectMeta: api.ObjectMeta{Name: fakeNodeName}}, pod: requesting("p", "cpu", "64")},
		{name: "node selector", node: admitNode("1", 10), pod: selecting(requesting("p")), reason: "NodeAffinity", msg: affinityMsg, affinityOnly: true},
		{name: "required node affinity", node: admitNode("1", 10), pod: func() *api.Pod {
			p := requesting("p")
			p.Spec.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{
				NodeSelectorTerms: []api.NodeSelectorTerm{{MatchExpressions: []api.NodeSelectorRequirement{{Key: "node", Operator: api.NodeSelectorOpIn, Values: []string{"other"}}}}}}}}
			return p
		}(), reason: "NodeAffinity", msg: affinityMsg, affinityOnly: true},
		{name: "node name", node: admitNode("1", 10), pod: func() *api.Pod { p := requesting("p"); p.Spec.NodeName = "node-b"; return p }(),
			reason: "NodeName", msg: "Predicate NodeName failed: node(s) didn't match the requested node name"},
		{name: "host port taken on all addresses", node: admitNode("1", 10), others: []*api.Pod{withHostPort(requesting("a"), "", api.ProtocolTCP, 54323)},
			pod:    withHostPort(requesting("p"), "127.0.0.1", api.ProtocolTCP, 54323),
			reason: "NodePorts", msg: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
		{name: "same host port on 0.0.0.0 after one address", node: admitNode("1", 10), others: []*api.Pod{withHostPort(requesting("a"), "127.0.0.1", api.ProtocolTCP, 54323)},
			pod:    withHostPort(requesting("p"), "0.0.0.0", "", 54323),
			reason: "NodePorts", msg: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"},
		{name: "same host port, other address and protocol", node: admitNode("1", 10),
			others: []*api.Pod{withHostPort(requesting("a"), "127.0.0.1", api.ProtocolTCP, 54323), withHostPort(requesting("b"), "192.0.2.10", api.ProtocolTCP, 54323)},
			pod:    withHostPort(requesting("p"), "192.0.2.10", api.ProtocolUDP, 54323)},
		{name: "NoExecute taint", node: tainted(api.TaintEffectNoExecute), pod: requesting("p"),
			reason: "TaintToleration", msg: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate"},
		{name: "NoExecute taint tolerated", node: tainted(api.TaintEffectNoExecute), pod: func() *api.Pod {
			p := requesting("p")
			p.Spec.Tolerations = []api.Toleration{{Key: "dedicated", Operator: api.TolerationOpExists}}
			return p
		}()},
		{name: "NoSchedule taint is the scheduler's", node: tainted(api.TaintEffectNoSchedule), pod: requesting("p")},
		{name: "os label", node: admitNode("1", 10), pod: func() *api.Pod {
			p := requesting("p")
			p.Labels = map[string]string{"kubernetes.io/os": "windows"}
			return p
		}(),
			reason: "PodOSSelectorNodeLabelDoesNotMatch", msg: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		{name: "os field", node: admitNode("1", 10), pod: func() *api.Pod { p := requesting("p"); p.Spec.OS = &api.PodOS{Name: "windows"}; return p }(),
			reason: "PodOSNotSupported", msg: "Failed to admit pod as the OS field doesn't match node OS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg, affinityOnly := admitOnNode(tc.pod, tc.node, tc.others)
			if reason != tc.reason || msg != tc.msg || affinityOnly != tc.affinityOnly {
				t.Errorf("got %q %q (affinity only %v), want %q %q (%v)", reason, msg, affinityOnly, tc.reason, tc.msg, tc.affinityOnly)
			}
		})
	}
}

// rejectedFor waits until pod name is Failed and checks kube's reason,
// message and Warning event, and that nothing of it ever ran.
func (n *fakeNode) rejectedFor(name, reason, msg string) {
	n.t.Helper()
	p := n.waitPod(name, "Failed", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	if p.Status.Reason != reason || p.Status.Message != "Pod was rejected: "+msg {
		n.t.Errorf("pod %s: reason %q message %q, want %q %q", name, p.Status.Reason, p.Status.Message, reason, "Pod was rejected: "+msg)
	}
	if !n.hasEvent("Warning " + reason + " " + msg) {
		n.t.Errorf("no %s event in %q", reason, n.rec.Events())
	}
	time.Sleep(300 * time.Millisecond) // a few resyncs
	for _, a := range n.rt.Actions() {
		if strings.Contains(a, " "+name+"/") {
			n.t.Errorf("runtime call %q for rejected pod %s", a, name)
		}
	}
	if p := n.pod(name); p.Status.Phase != api.PodFailed || len(p.Status.ContainerStatuses) != 0 {
		n.t.Errorf("pod %s after resyncs: %+v", name, p.Status)
	}
}

func (n *fakeNode) create(p *api.Pod) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := client.Resource[api.Pod](n.api.Client()).Namespace(p.Namespace).Create(ctx, p); err != nil {
		n.t.Fatal(err)
	}
}

// TestFakeOutOfCPUInCreationOrder: two pods that do not both fit arrive
// together; the one created first runs and the other is rejected
// OutOfcpu, as kube's kubelet admits a batch in creation order.
func TestFakeOutOfCPUInCreationOrder(t *testing.T) {
	first, second := requesting("a-first", "cpu", "600m"), requesting("b-second", "cpu", "600m")
	// The later pod is listed first: the order must come from the pods.
	second.CreationTimestamp = api.NewTime(time.Now().Add(time.Second))
	n := newFakeNode(t, nil, admitNode("1", 10), second, first)
	n.waitPod("a-first", "Running", isRunning)
	n.rejectedFor("b-second", "OutOfcpu", "Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000")
}

// TestFakeFinishedPodFreesResources: a pod that finished no longer holds
// its requests; a rejected one never did.
func TestFakeFinishedPodFreesResources(t *testing.T) {
	done := requesting("done", "cpu", "600m")
	done.Spec.RestartPolicy = api.RestartPolicyNever
	n := newFakeNode(t, nil, admitNode("1", 10), done)
	n.waitPod("done", "Running", isRunning)
	n.create(requesting("refused", "cpu", "600m"))
	n.rejectedFor("refused", "OutOfcpu", "Node didn't have enough resource: cpu, requested: 600, used: 600, capacity: 1000")
	n.rt.Exit(n.rt.Running("done", "main").ID, 0, "Completed")
	n.waitPod("done", "Succeeded", func(p *api.Pod) bool { return p.Status.Phase == api.PodSucceeded })
	n.create(requesting("later", "cpu", "600m"))
	n.waitPod("later", "Running", isRunning)
}

// TestFakeHostPortConflict: the hostPort spec's pods (same port, other
// address or protocol) all run; the same port and protocol on 0.0.0.0
// is rejected.
func TestFakeHostPortConflict(t *testing.T) {
	n := newFakeNode(t, nil, admitNode("1", 10), withHostPort(requesting("pod1"), "127.0.0.1", api.ProtocolTCP, 54323))
	n.waitPod("pod1", "Running", isRunning)
	n.create(withHostPort(requesting("pod2"), "192.0.2.10", api.ProtocolTCP, 54323))
	n.waitPod("pod2", "Running", isRunning)
	n.create(withHostPort(requesting("pod3"), "192.0.2.10", api.ProtocolUDP, 54323))
	n.waitPod("pod3", "Running", isRunning)
	n.create(withHostPort(requesting("pod4"), "0.0.0.0", api.ProtocolTCP, 54323))
	n.rejectedFor("pod4", "NodePorts", "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports")
}

// TestFakeNodeAffinityReadsTheNodeAgain: a pod whose node selector only a
// label the kubelet's cache has not seen yet matches is admitted after a
// live read of the Node; one matching nothing is rejected.
func TestFakeNodeAffinityReadsTheNodeAgain(t *testing.T) {
	live := admitNode("1", 10)
	live.Labels["disk"] = "ssd"
	// Only a GET of the Node (not the informer's list and watch) sees the
	// label.
	seed := func(n *fakeNode) {
		n.api.PrependReactor("get", "nodes", func(clienttest.Action) (bool, any, error) { return true, live, nil })
	}
	p := requesting("ssd")
	p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	q := requesting("nvme")
	q.Spec.NodeSelector = map[string]string{"disk": "nvme"}
	n := newFakeNode(t, seed, admitNode("1", 10), p, q)
	n.waitPod("ssd", "Running", isRunning)
	n.rejectedFor("nvme", "NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")
}

// TestFakeNoExecuteTaint: a pod bound by hand to a node with a NoExecute
// taint it does not tolerate is rejected.
func TestFakeNoExecuteTaint(t *testing.T) {
	node := admitNode("1", 10)
	node.Spec.Taints = []api.Taint{{Key: "dedicated", Value: "x", Effect: api.TaintEffectNoExecute}}
	n := newFakeNode(t, nil, node, requesting("intruder"))
	n.rejectedFor("intruder", "TaintToleration", "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate")
}
