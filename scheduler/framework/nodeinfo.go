package framework

import (
	"fmt"
	"sync/atomic"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
)

// AffinityTerm is a parsed pod (anti-)affinity term: which pods it selects
// (namespaces and label selector) in which topology domain.
type AffinityTerm struct {
	// Namespaces the selected pods may live in; AllNamespaces overrides it
	// (an empty namespaceSelector).
	Namespaces    map[string]bool
	AllNamespaces bool
	Selector      labels.Selector
	TopologyKey   string
	Weight        int32
}

// Matches reports whether pod is selected by the term.
func (t *AffinityTerm) Matches(pod *api.Pod) bool {
	if !t.AllNamespaces && !t.Namespaces[pod.Namespace] {
		return false
	}
	return t.Selector.Matches(labels.Set(pod.Labels))
}

// PodInfo is a pod with what the plugins derive from it once: its resource
// requests, its parsed affinity terms and its controller.
type PodInfo struct {
	Pod *api.Pod
	// Requests and NonZeroRequests are PodRequests(Pod).
	Requests, NonZeroRequests Resource
	RequiredAffinityTerms     []AffinityTerm
	RequiredAntiAffinityTerms []AffinityTerm
	PreferredAffinityTerms    []AffinityTerm
	PreferredAntiAffinity     []AffinityTerm
	// OwnerUID is the UID of the controller owning the pod ("" for none).
	OwnerUID api.UID
	// ParseError is set when an affinity term's selector did not parse; the
	// term is then left out (and InterPodAffinity rejects the pod).
	ParseError error
}

// NewPodInfo derives a PodInfo from pod.
func NewPodInfo(pod *api.Pod) *PodInfo {
	pi := &PodInfo{Pod: pod}
	pi.Requests, pi.NonZeroRequests = PodRequests(pod)
	if ref := api.GetControllerOf(&pod.ObjectMeta); ref != nil {
		pi.OwnerUID = ref.UID
	}
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			pi.RequiredAffinityTerms = pi.parseTerms(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, nil)
			pi.PreferredAffinityTerms = pi.parseTerms(nil, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if a.PodAntiAffinity != nil {
			pi.RequiredAntiAffinityTerms = pi.parseTerms(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, nil)
			pi.PreferredAntiAffinity = pi.parseTerms(nil, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	return pi
}

func (pi *PodInfo) parseTerms(req []api.PodAffinityTerm, pref []api.WeightedPodAffinityTerm) []AffinityTerm {
	var out []AffinityTerm
	one := func(t *api.PodAffinityTerm, w int32) {
		sel, err := affinitySelector(pi.Pod, t)
		if err != nil {
			pi.ParseError = fmt.Errorf("pod affinity term: %w", err)
			return
		}
		at := AffinityTerm{Selector: sel, TopologyKey: t.TopologyKey, Weight: w, Namespaces: map[string]bool{}}
		for _, ns := range t.Namespaces {
			at.Namespaces[ns] = true
		}
		switch {
		case t.NamespaceSelector != nil && len(t.NamespaceSelector.MatchLabels) == 0 && len(t.NamespaceSelector.MatchExpressions) == 0:
			at.AllNamespaces = true
		case len(t.Namespaces) == 0 && t.NamespaceSelector == nil:
			at.Namespaces[pi.Pod.Namespace] = true
		}
		out = append(out, at)
	}
	for i := range req {
		one(&req[i], 1)
	}
	for i := range pref {
		one(&pref[i].PodAffinityTerm, pref[i].Weight)
	}
	return out
}

// affinitySelector parses a term's label selector and folds in
// matchLabelKeys / mismatchLabelKeys with the incoming pod's values, as kube
// does at admission.
func affinitySelector(pod *api.Pod, t *api.PodAffinityTerm) (labels.Selector, error) {
	if t.LabelSelector == nil {
		return labels.Nothing(), nil
	}
	sel, err := labels.SelectorFromLabelSelector(t.LabelSelector)
	if err != nil {
		return nil, err
	}
	for _, k := range t.MatchLabelKeys {
		if v, ok := pod.Labels[k]; ok {
			r, err := labels.NewRequirement(k, labels.OpIn, []string{v})
			if err != nil {
				return nil, err
			}
			sel = sel.Add(*r)
		}
	}
	for _, k := range t.MismatchLabelKeys {
		if v, ok := pod.Labels[k]; ok {
			r, err := labels.NewRequirement(k, labels.OpNotIn, []string{v})
			if err != nil {
				return nil, err
			}
			sel = sel.Add(*r)
		}
	}
	return sel, nil
}

// ProtocolPort is a host port with its protocol.
type ProtocolPort struct {
	Protocol api.Protocol
	Port     int32
}

// HostPortInfo records the host ports in use on a node: host IP -> ports.
// 0.0.0.0 (or an empty IP) conflicts with every IP.
type HostPortInfo map[string]map[ProtocolPort]int

const anyIP = "0.0.0.0"

func normalize(ip string, proto api.Protocol) (string, api.Protocol) {
	if ip == "" {
		ip = anyIP
	}
	if proto == "" {
		proto = api.ProtocolTCP
	}
	return ip, proto
}

// Add records one use of ip:port/proto.
func (h HostPortInfo) Add(ip string, proto api.Protocol, port int32) {
	ip, proto = normalize(ip, proto)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]int{}
	}
	h[ip][ProtocolPort{proto, port}]++
}

// Remove forgets one use of ip:port/proto.
func (h HostPortInfo) Remove(ip string, proto api.Protocol, port int32) {
	ip, proto = normalize(ip, proto)
	pp := ProtocolPort{proto, port}
	if m := h[ip]; m != nil {
		if m[pp]--; m[pp] <= 0 {
			delete(m, pp)
		}
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// CheckConflict reports whether ip:port/proto collides with a port in use.
func (h HostPortInfo) CheckConflict(ip string, proto api.Protocol, port int32) bool {
	ip, proto = normalize(ip, proto)
	pp := ProtocolPort{proto, port}
	if ip == anyIP {
		for _, m := range h {
			if m[pp] > 0 {
				return true
			}
		}
		return false
	}
	return h[ip][pp] > 0 || h[anyIP][pp] > 0
}

// HostPorts lists the host ports a pod's containers ask for.
func HostPorts(pod *api.Pod) []api.ContainerPort {
	var out []api.ContainerPort
	for _, cs := range [][]api.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			for _, p := range cs[i].Ports {
				if p.HostPort > 0 {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

var generation atomic.Int64

// nextGeneration returns a number larger than every one returned before;
// NodeInfo.Generation records when a node's view last changed.
func nextGeneration() int64 { return generation.Add(1) }

// NodeInfo is the scheduler's view of one node: the Node object, the pods
// on it (bound or assumed), and the aggregates the filters and scores use.
type NodeInfo struct {
	node *api.Node
	// Name, Labels, Taints, Unschedulable and Ready are copied from the
	// Node by SetNode: the filters read them for every node of every
	// cycle, and reading them here avoids touching the (large, scattered)
	// Node objects.
	Name          string
	Labels        map[string]string
	Taints        []api.Taint
	Unschedulable bool
	Ready         bool
	// Pods are the pods on the node, bound or assumed.
	Pods []*PodInfo
	// PodsWithAffinity and PodsWithRequiredAntiAffinity are the subsets
	// InterPodAffinity needs.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	// Requested is the sum of the pods' requests; NonZeroRequested the
	// same with the scoring defaults for unset cpu and memory.
	Requested, NonZeroRequested Resource
	// Allocatable is the node's status.allocatable.
	Allocatable Resource
	UsedPorts   HostPortInfo
	// OwnerCounts counts the pods on the node by controller UID, for
	// spreading.
	OwnerCounts map[api.UID]int
	// Generation changes with every modification.
	Generation int64
}

// NewNodeInfo returns an empty NodeInfo holding pods.
func NewNodeInfo(pods ...*PodInfo) *NodeInfo {
	ni := &NodeInfo{UsedPorts: HostPortInfo{}, OwnerCounts: map[api.UID]int{}, Generation: nextGeneration()}
	for _, p := range pods {
		ni.AddPodInfo(p)
	}
	return ni
}

// Node returns the Node object (nil when pods arrived before their node).
func (n *NodeInfo) Node() *api.Node { return n.node }

// SetNode sets the Node object and its allocatable.
func (n *NodeInfo) SetNode(node *api.Node) {
	n.node = node
	n.Name, n.Labels, n.Taints, n.Unschedulable = node.Name, node.Labels, node.Spec.Taints, node.Spec.Unschedulable
	n.Ready = false
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == api.NodeReady {
			n.Ready = node.Status.Conditions[i].Status == api.ConditionTrue
		}
	}
	n.Allocatable = NewResource(node.Status.Allocatable)
	n.Generation = nextGeneration()
}

// RemoveNode forgets the Node object and keeps the pods (they are deleted
// by their own events).
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.Labels, n.Taints, n.Unschedulable, n.Ready = nil, nil, false, false
	n.Allocatable = Resource{}
	n.Generation = nextGeneration()
}

// AddPodInfo adds a pod to the node.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if len(pi.RequiredAffinityTerms) > 0 || len(pi.RequiredAntiAffinityTerms) > 0 || len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinity) > 0 {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if len(pi.RequiredAntiAffinityTerms) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// RemovePod removes the pod with pod's UID; it is an error when absent.
func (n *NodeInfo) RemovePod(pod *api.Pod) error {
	for i, pi := range n.Pods {
		if pi.Pod.UID != pod.UID {
			continue
		}
		n.Pods[i] = n.Pods[len(n.Pods)-1]
		n.Pods[len(n.Pods)-1] = nil
		n.Pods = n.Pods[:len(n.Pods)-1]
		n.PodsWithAffinity = removeFrom(n.PodsWithAffinity, pod.UID)
		n.PodsWithRequiredAntiAffinity = removeFrom(n.PodsWithRequiredAntiAffinity, pod.UID)
		n.update(pi, -1)
		return nil
	}
	return fmt.Errorf("pod %s/%s not found on node %s", pod.Namespace, pod.Name, n.name())
}

func removeFrom(pis []*PodInfo, uid api.UID) []*PodInfo {
	for i, pi := range pis {
		if pi.Pod.UID == uid {
			pis[i] = pis[len(pis)-1]
			pis[len(pis)-1] = nil
			return pis[:len(pis)-1]
		}
	}
	return pis
}

func (n *NodeInfo) name() string {
	if n.Name == "" {
		return "<unknown>"
	}
	return n.Name
}

func (n *NodeInfo) update(pi *PodInfo, sign int) {
	if sign > 0 {
		n.Requested.AddResource(pi.Requests)
		n.NonZeroRequested.AddResource(pi.NonZeroRequests)
	} else {
		n.Requested.SubResource(pi.Requests)
		n.NonZeroRequested.SubResource(pi.NonZeroRequests)
	}
	for _, p := range HostPorts(pi.Pod) {
		if sign > 0 {
			n.UsedPorts.Add(p.HostIP, p.Protocol, p.HostPort)
		} else {
			n.UsedPorts.Remove(p.HostIP, p.Protocol, p.HostPort)
		}
	}
	if pi.OwnerUID != "" {
		n.OwnerCounts[pi.OwnerUID] += sign
		if n.OwnerCounts[pi.OwnerUID] <= 0 {
			delete(n.OwnerCounts, pi.OwnerUID)
		}
	}
	n.Generation = nextGeneration()
}

// Clone returns a copy that shares the (immutable) PodInfos and Node.
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		node:             n.node,
		Name:             n.Name,
		Labels:           n.Labels,
		Taints:           n.Taints,
		Unschedulable:    n.Unschedulable,
		Ready:            n.Ready,
		Pods:             append([]*PodInfo(nil), n.Pods...),
		Requested:        n.Requested.Clone(),
		NonZeroRequested: n.NonZeroRequested.Clone(),
		Allocatable:      n.Allocatable.Clone(),
		UsedPorts:        make(HostPortInfo, len(n.UsedPorts)),
		OwnerCounts:      make(map[api.UID]int, len(n.OwnerCounts)),
		Generation:       n.Generation,
	}
	if len(n.PodsWithAffinity) > 0 {
		c.PodsWithAffinity = append([]*PodInfo(nil), n.PodsWithAffinity...)
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		c.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	}
	for ip, m := range n.UsedPorts {
		cm := make(map[ProtocolPort]int, len(m))
		for k, v := range m {
			cm[k] = v
		}
		c.UsedPorts[ip] = cm
	}
	for k, v := range n.OwnerCounts {
		c.OwnerCounts[k] = v
	}
	return c
}
