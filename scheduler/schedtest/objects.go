package schedtest

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

// Node returns a Ready node with allocatable cpu, memory and pods and the
// kubernetes.io/hostname label.
func Node(name, cpu, memory string, pods int) *api.Node {
	rl := api.ResourceList{
		api.ResourceCPU:    resource.MustParse(cpu),
		api.ResourceMemory: resource.MustParse(memory),
		api.ResourcePods:   resource.MustParse(fmt.Sprint(pods)),
	}
	return &api.Node{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: api.ObjectMeta{Name: name, UID: api.UID("uid-node-" + name), Labels: map[string]string{api.LabelHostname: name}},
		Status: api.NodeStatus{
			Capacity:    rl,
			Allocatable: rl,
			Conditions:  []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady"}},
		},
	}
}

// WithLabels adds labels to n and returns it.
func WithLabels(n *api.Node, kv ...string) *api.Node {
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// WithTaints adds taints to n and returns it.
func WithTaints(n *api.Node, taints ...api.Taint) *api.Node {
	n.Spec.Taints = append(n.Spec.Taints, taints...)
	return n
}

// NotReady turns n's Ready condition False.
func NotReady(n *api.Node) *api.Node {
	n.Status.Conditions = []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionFalse, Reason: "KubeletNotReady"}}
	return n
}

// Pod returns a pending pod in ns with one container requesting cpu and
// memory (empty strings request nothing).
func Pod(ns, name, cpu, memory string) *api.Pod {
	req := api.ResourceList{}
	if cpu != "" {
		req[api.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		req[api.ResourceMemory] = resource.MustParse(memory)
	}
	return &api.Pod{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, UID: api.UID("uid-pod-" + ns + "-" + name)},
		Spec: api.PodSpec{
			Containers: []api.Container{{Name: "c", Image: "busybox", Resources: api.ResourceRequirements{Requests: req}}},
		},
	}
}

// OnNode returns pod bound to node (for pods already placed).
func OnNode(p *api.Pod, node string) *api.Pod {
	p.Spec.NodeName = node
	return p
}

// WithHostPort adds a container port with hostPort to p.
func WithHostPort(p *api.Pod, port int32) *api.Pod {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, api.ContainerPort{ContainerPort: port, HostPort: port, Protocol: api.ProtocolTCP})
	return p
}

// OwnedBy sets a controller ownerReference with uid on p.
func OwnedBy(p *api.Pod, kind, name string, uid api.UID) *api.Pod {
	t := true
	p.OwnerReferences = append(p.OwnerReferences, api.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &t})
	return p
}

// EnvInt reads a positive integer from the environment (benchmark sizes
// such as SCHED_BENCH_NODES), def when unset or invalid.
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// CPUTime returns the CPU time (user + system) the process used so far;
// benchmarks on a shared machine report CPU per pod next to wall-clock
// rates, since the latter depend on how much of the machine they got.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
