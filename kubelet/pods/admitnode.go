package pods

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sort"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/podplacement"
	"github.com/minik8s/minik8s/kubelet/staticpods"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeaffinity"
	"github.com/minik8s/minik8s/scheduler/plugins/nodename"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeports"
	"github.com/minik8s/minik8s/scheduler/plugins/noderesources"
	"github.com/minik8s/minik8s/scheduler/plugins/tainttoleration"
)

// Reasons of kube's predicate admit handler (pkg/kubelet/lifecycle).
const (
	reasonOSSelectorMismatch = "PodOSSelectorNodeLabelDoesNotMatch"
	reasonOSNotSupported     = "PodOSNotSupported"
	// insufficientPrefix makes "OutOfcpu", "OutOfpods", "OutOfexample.com/foo".
	insufficientPrefix = "OutOf"
	// errReasonUntoleratedTaint is the reason kube's kubelet gives for a
	// NoExecute taint (the scheduler's own message names the taint).
	errReasonUntoleratedTaint = "node(s) had taints that the pod didn't tolerate"
)

// predicateFailure is one filter of the node's predicates a pod fails:
// a resource it does not fit in, or a named predicate.
type predicateFailure struct {
	insufficient *noderesources.InsufficientResource
	predicate    string // the plugin's name
	desc         string // its reason
}

// reason and message are kube's: "OutOfcpu" with "Node didn't have
// enough resource: cpu, requested: ..., used: ..., capacity: ...", or the
// predicate's name with "Predicate NodePorts failed: ...".
func (f predicateFailure) reasonMessage() (string, string) {
	if r := f.insufficient; r != nil {
		return insufficientPrefix + string(r.ResourceName), fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			r.ResourceName, r.Requested, r.Used, r.Capacity)
	}
	return f.predicate, fmt.Sprintf("Predicate %s failed: %s", f.predicate, f.desc)
}

// admitOnNode is kube's predicate admit handler: whether pod may run on
// node next to others, the pods the kubelet admitted before it that still
// run. It returns the rejection reason and message ("" admits), and
// whether node affinity alone refused (the node's labels may be stale).
func admitOnNode(pod *api.Pod, node *api.Node, others []*api.Pod) (reason, message string, affinityOnly bool) {
	// The checks preemption could not help come first.
	if os, ok := pod.Labels[api.LabelOSStable]; ok && os != goruntime.GOOS {
		return reasonOSSelectorMismatch, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label", false
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != goruntime.GOOS {
		return reasonOSNotSupported, "Failed to admit pod as the OS field doesn't match node OS", false
	}
	fails := nodePredicates(pod, node, others)
	if len(fails) == 0 {
		return "", "", false
	}
	affinityOnly = true
	for _, f := range fails {
		affinityOnly = affinityOnly && f.predicate == nodeaffinity.Name
	}
	// Kube reports the first failure only.
	reason, message = fails[0].reasonMessage()
	return reason, message, affinityOnly
}

// nodePredicates are the scheduler's filters the kubelet runs again (kube's
// AdmissionCheck with every failure, then the NoExecute taints), in kube's
// order: resources, node affinity, node name, host ports, taints.
func nodePredicates(pod *api.Pod, node *api.Node, others []*api.Pod) []predicateFailure {
	infos := make([]*framework.PodInfo, 0, len(others))
	for _, p := range others {
		infos = append(infos, framework.NewPodInfo(p))
	}
	n := framework.NewNodeInfo(infos...)
	n.SetNode(node)
	var fails []predicateFailure
	// A node whose status does not say what it has yet (the node status
	// manager has not written it) cannot refuse for resources: kube's
	// kubelet would use the capacity it computes itself, which this pod
	// manager does not know.
	if len(node.Status.Allocatable) > 0 {
		req, _ := framework.PodRequests(pod)
		for _, r := range noderesources.Fits(withoutMissingExtended(req, n.Allocatable), n) {
			fails = append(fails, predicateFailure{insufficient: &r})
		}
	}
	if !podplacement.Matches(pod, node) {
		fails = append(fails, predicateFailure{predicate: nodeaffinity.Name, desc: nodeaffinity.ErrReasonPod})
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		fails = append(fails, predicateFailure{predicate: nodename.Name, desc: nodename.ErrReason})
	}
	for _, p := range framework.HostPorts(pod) {
		if n.UsedPorts.CheckConflict(p.HostIP, p.Protocol, p.HostPort) {
			fails = append(fails, predicateFailure{predicate: nodeports.Name, desc: nodeports.ErrReason})
			break
		}
	}
	// The kubelet cares only for NoExecute taints: a NoSchedule one was the
	// scheduler's business (or was bypassed by a pod bound by hand). Static
	// pods, which kube exempts, do not exist here.
	if _, found := podplacement.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, api.TaintEffectNoExecute); found {
		fails = append(fails, predicateFailure{predicate: tainttoleration.Name, desc: errReasonUntoleratedTaint})
	}
	return fails
}

// withoutMissingExtended drops the requests of extended resources the node
// does not list, as kube's removeMissingExtendedResources: they are
// cluster-level resources (or backed by DRA) the node does not account.
func withoutMissingExtended(req framework.Resource, allocatable framework.Resource) framework.Resource {
	if len(req.Scalar) == 0 {
		return req
	}
	req = req.Clone()
	for name := range req.Scalar {
		if _, ok := allocatable.Scalar[name]; !ok && api.IsExtendedResourceName(name) {
			delete(req.Scalar, name)
		}
	}
	return req
}

// admission is the kubelet's decision about one pod, kept while the pod is
// on the node.
type admission struct {
	// rejected is why the pod may not run (nil: admitted).
	rejected *rejection
	// finished: the pod reached a terminal phase and no longer holds what
	// it was admitted with.
	finished bool
	// allocated is the resources the pod's containers were admitted with
	// or last resized to (resize.go).
	allocated allocation
}

// nodeAffinityRecheckTimeout bounds the live read of the Node when node
// affinity alone refused a pod.
const nodeAffinityRecheckTimeout = 5 * time.Second

// decideAdmission returns the kubelet's admission decision for pod, making
// it if it was not made: as kube's HandlePodAdditions, pods are admitted
// one at a time in the order of their creation (earlier pods still
// undecided are decided first), each against the pods admitted before it
// that have not finished. ok is false while the Node is not known yet.
func (m *Manager) decideAdmission(ctx context.Context, pod *api.Pod) (a *admission, ok bool) {
	m.admitMu.Lock()
	defer m.admitMu.Unlock()
	if a := m.admissions[string(pod.UID)]; a != nil {
		return a, true
	}
	node := m.node()
	if node == nil {
		if !staticpods.IsStatic(pod) {
			return nil, false
		}
		// A static pod runs without the API: without its Node the pod is
		// admitted on what the kubelet knows alone (sysctls, AppArmor), as
		// kube's kubelet admits against the node it builds locally.
		m.admitOne(ctx, pod, nil)
		return m.admissions[string(pod.UID)], true
	}
	var pending []*api.Pod
	for _, p := range m.allPods() {
		if p.UID != pod.UID && m.admissions[string(p.UID)] == nil && !isTerminal(p.Status.Phase) && createdBefore(p, pod) {
			pending = append(pending, p)
		}
	}
	sort.Slice(pending, func(i, j int) bool { return createdBefore(pending[i], pending[j]) })
	for _, p := range append(pending, pod) {
		node = m.admitOne(ctx, p, node)
	}
	return m.admissions[string(pod.UID)], true
}

// createdBefore orders pods by creation time, then (creation times are in
// seconds) by namespace and name.
func createdBefore(a, b *api.Pod) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// admitOne runs the kubelet's admission handlers on pod in kube's order
// (sysctls, the node's predicates, AppArmor), records the decision and,
// for a rejection, the Warning event. It returns the Node it used (read
// again when only node affinity refused). The caller holds admitMu.
func (m *Manager) admitOne(ctx context.Context, pod *api.Pod, node *api.Node) *api.Node {
	// A pod a previous kubelet admitted (or resized) is admitted again with
	// what it was allocated, as kube's allocation checkpoint.
	alloc := m.loadAllocation(string(pod.UID))
	saved := alloc != nil
	if !saved {
		alloc = specAllocation(pod)
	}
	pod = alloc.apply(pod)
	reason, msg := sysctlForbidden, admitSysctls(pod)
	if msg == "" {
		var affinityOnly bool
		if node != nil {
			reason, msg, affinityOnly = admitOnNode(pod, node, m.activeAdmitted(pod))
		}
		if affinityOnly {
			// The Node's labels in the cache may lag behind a label just
			// added: read it live and check again, as kube does.
			if fresh := m.readNode(ctx); fresh != nil {
				node = fresh
				reason, msg, _ = admitOnNode(pod, node, m.activeAdmitted(pod))
			}
		}
	}
	if msg == "" {
		reason, msg = appArmorNotAdmitted, admitAppArmor(pod, hostAppArmorEnabled())
	}
	a := &admission{}
	if msg != "" {
		m.log.Info("pod rejected", "pod", pod.Namespace+"/"+pod.Name, "reason", reason, "message", msg)
		m.rec.Event(pod, api.EventTypeWarning, reason, msg)
		a.rejected = &rejection{reason: reason, message: rejectedPrefix + msg}
	} else {
		a.allocated = alloc
		if !saved {
			if err := m.saveAllocation(string(pod.UID), alloc); err != nil {
				m.log.Warn("record the pod's resource allocation", "pod", pod.Namespace+"/"+pod.Name, "err", err)
			}
		}
	}
	m.admissions[string(pod.UID)] = a
	return node
}

// activeAdmitted are the pods on the node, other than pod, the kubelet
// admitted and that have not finished, with the resources allocated to
// them. The caller holds admitMu.
func (m *Manager) activeAdmitted(pod *api.Pod) []*api.Pod {
	var out []*api.Pod
	for _, p := range m.allPods() {
		a := m.admissions[string(p.UID)]
		if p.UID == pod.UID || a == nil || a.rejected != nil || a.finished || isTerminal(p.Status.Phase) {
			continue
		}
		out = append(out, a.allocated.apply(p))
	}
	return out
}

// node is the kubelet's Node as last seen (nil before it exists).
func (m *Manager) node() *api.Node {
	if m.nodes == nil {
		return nil
	}
	for _, n := range m.nodes.Store().List() {
		return n
	}
	return nil
}

// readNode reads the Node from the apiserver (nil on failure).
func (m *Manager) readNode(ctx context.Context) *api.Node {
	ctx, cancel := context.WithTimeout(ctx, nodeAffinityRecheckTimeout)
	defer cancel()
	n, err := client.Resource[api.Node](m.client).Get(ctx, m.opts.NodeName)
	if err != nil {
		m.log.Warn("read the node again for node affinity", "err", err)
		return nil
	}
	return n
}

// admissionFinished notes that a pod reached a terminal phase: what it
// was admitted with is free for the pods admitted after.
func (m *Manager) admissionFinished(uid string) {
	m.admitMu.Lock()
	defer m.admitMu.Unlock()
	if a := m.admissions[uid]; a != nil {
		a.finished = true
	}
}

// forgetAdmission drops the decision about a pod gone from the node.
func (m *Manager) forgetAdmission(uid string) {
	m.admitMu.Lock()
	defer m.admitMu.Unlock()
	delete(m.admissions, uid)
}
