package authz

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// NodeGraph answers which pods are bound to which node, typically from the
// apiserver's pod watch cache (indexed by spec.nodeName). The Node
// authorizer only reads what it returns.
type NodeGraph interface {
	// PodsOnNode returns the pods whose spec.nodeName is node.
	PodsOnNode(node string) []*api.Pod
	// NodeForPod returns the spec.nodeName of pod namespace/name ("" when
	// unscheduled); found is false when the pod is unknown.
	NodeForPod(namespace, name string) (node string, found bool)
}

// Node is Kubernetes' Node authorizer, for kubelets: users
// "system:node:NAME" in the system:nodes group. Other users get NoOpinion.
// A kubelet may
//   - read every Node, create Nodes, and update or patch its own Node and
//     its status;
//   - get, create, update, patch and delete its own Lease in kube-node-lease;
//   - read every pod, create pods (the NodeRestriction admission plugin
//     lets only mirror pods through), delete pods bound to it and update or
//     patch their status;
//   - get the secrets, config maps and persistent volume claims the pods
//     bound to it reference, and get the service accounts of those pods
//     and create their tokens (serviceaccounts/NAME/token);
//   - and, by the static node rules (NodeRules), write events, read
//     services, endpoints and endpoint slices, and create and read
//     certificate signing requests.
//
// Writes it governs that target another node's object (another Node, Lease,
// or a pod bound elsewhere) are denied outright, so no other authorizer can
// allow them; everything else it does not allow gets NoOpinion. Creates
// carry no name in the URL, so NodeRestriction checks the created
// object's name and node.
type Node struct {
	graph NodeGraph
	rules []api.PolicyRule
}

var _ Authorizer = (*Node)(nil)

// NewNode returns a Node authorizer reading graph.
func NewNode(graph NodeGraph) *Node { return &Node{graph: graph, rules: NodeRules()} }

// Authorize implements Authorizer.
func (n *Node) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	node, isNode := NodeIdentity(a.User)
	if !isNode {
		return NoOpinion, "", nil
	}
	if node == "" {
		return NoOpinion, fmt.Sprintf("unknown node for user %q", a.User.Name), nil
	}
	if a.IsResourceRequest {
		switch a.APIGroup + "/" + a.Resource {
		case "/secrets":
			return n.readReferenced(node, a, api.VisitPodSecretNames)
		case "/configmaps":
			return n.readReferenced(node, a, api.VisitPodConfigMapNames)
		case "/persistentvolumeclaims":
			return n.readReferenced(node, a, visitPodClaimNames)
		case "/serviceaccounts":
			return n.serviceAccount(node, a)
		case "/persistentvolumes":
			// The graph does not know which volume a claim is bound to.
			return NoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
		case "coordination.k8s.io/leases":
			return n.lease(node, a)
		case "/nodes":
			return n.nodeObject(node, a)
		case "/pods":
			return n.pod(node, a)
		}
	}
	if RulesAllow(a, n.rules...) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
}

// serviceAccount allows getting, and creating tokens of, the service
// accounts of the pods bound to the node (Kubernetes' authorizeCreateToken
// and authorizeReadNamespacedObject); NodeRestriction then holds a token
// request to one of those pods as bound object.
func (n *Node) serviceAccount(node string, a Attributes) (Decision, string, error) {
	if a.Verb == "get" && a.Subresource == "" {
		return n.readReferenced(node, a, visitPodServiceAccountName)
	}
	if a.Verb != "create" || a.Name == "" {
		return NoOpinion, "can only create tokens for individual service accounts", nil
	}
	if a.Subresource != "token" {
		return NoOpinion, "can only create token subresource of serviceaccount", nil
	}
	for _, pod := range n.graph.PodsOnNode(node) {
		if pod.Namespace == a.Namespace && pod.Spec.ServiceAccountName == a.Name {
			return Allow, "", nil
		}
	}
	return NoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
}

func visitPodServiceAccountName(pod *api.Pod, visit func(string) bool) bool {
	if pod.Spec.ServiceAccountName != "" {
		return visit(pod.Spec.ServiceAccountName)
	}
	return true
}

// readReferenced allows getting one named object of a kind the node's pods
// reference; the Kubernetes reasons explain every refusal.
func (n *Node) readReferenced(node string, a Attributes, visit func(*api.Pod, func(string) bool) bool) (Decision, string, error) {
	switch a.Verb {
	case "get", "list", "watch":
	default:
		return NoOpinion, "can only read resources of this type", nil
	}
	if a.Subresource != "" {
		return NoOpinion, "cannot read subresource", nil
	}
	if a.Namespace == "" {
		return NoOpinion, "can only read namespaced object of this type", nil
	}
	if a.Name == "" {
		return NoOpinion, "No Object name found", nil
	}
	for _, pod := range n.graph.PodsOnNode(node) {
		if pod.Namespace != a.Namespace {
			continue
		}
		found := !visit(pod, func(name string) bool { return name != a.Name })
		if found {
			return Allow, "", nil
		}
	}
	return NoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", node), nil
}

func visitPodClaimNames(pod *api.Pod, visit func(string) bool) bool {
	for _, v := range pod.Spec.Volumes {
		if c := v.PersistentVolumeClaim; c != nil && c.ClaimName != "" && !visit(c.ClaimName) {
			return false
		}
	}
	return true
}

// lease: a node's heartbeat Lease is named after the node in
// kube-node-lease.
func (n *Node) lease(node string, a Attributes) (Decision, string, error) {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return NoOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if a.Namespace != api.NamespaceNodeLease {
		return NoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", api.NamespaceNodeLease), nil
	}
	// A create names its object in the body, which NodeRestriction checks.
	if a.Verb != "create" && a.Name != node {
		const reason = "can only access node lease with the same name as the requesting node"
		if a.Verb == "get" {
			return NoOpinion, reason, nil
		}
		return Deny, reason, nil
	}
	return Allow, "", nil
}

// nodeObject: any Node may be read, only the node's own written.
func (n *Node) nodeObject(node string, a Attributes) (Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get", "list", "watch", "create":
			return Allow, "", nil
		case "update", "patch":
			return n.ownNode(node, a)
		}
	case "status":
		switch a.Verb {
		case "update", "patch":
			return n.ownNode(node, a)
		}
	}
	return NoOpinion, "", nil
}

func (n *Node) ownNode(node string, a Attributes) (Decision, string, error) {
	if a.Name != node {
		return Deny, fmt.Sprintf("node %q is not allowed to modify node %q", node, a.Name), nil
	}
	return Allow, "", nil
}

// pod: pods may be read and (mirror pods) created; deleting a pod and
// writing its status need the pod to be bound to the node. A pod the graph
// does not know yet is left to NodeRestriction, which sees the stored pod,
// and to the registry's NotFound.
func (n *Node) pod(node string, a Attributes) (Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get", "list", "watch", "create":
			return Allow, "", nil
		case "delete":
			return n.boundPod(node, a, fmt.Sprintf("node %q can only delete pods with spec.nodeName set to itself", node))
		}
	case "status":
		switch a.Verb {
		case "update", "patch":
			return n.boundPod(node, a, fmt.Sprintf("node %q can only update pod status for pods with spec.nodeName set to itself", node))
		}
	}
	return NoOpinion, "", nil
}

func (n *Node) boundPod(node string, a Attributes, refusal string) (Decision, string, error) {
	if a.Name == "" {
		return NoOpinion, refusal, nil
	}
	bound, found := n.graph.NodeForPod(a.Namespace, a.Name)
	if found && bound != node {
		return Deny, refusal, nil
	}
	return Allow, "", nil
}
