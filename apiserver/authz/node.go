package authz

import (
	"context"
	"fmt"

	"github.com/minik8s/minik8s/api"
)

// NodeObjects looks up the node named by the objects the NodeGraph does
// not hold, typically in the apiserver's watch caches.
type NodeObjects interface {
	// NodeOf returns the spec.nodeName of the object namespace/name of
	// resource, one of volumeattachments, resourceslices and
	// podcertificaterequests ("" when unset); found is false when the
	// object is unknown.
	NodeOf(resource, namespace, name string) (node string, found bool)
}

// Node is Kubernetes' Node authorizer (plugin/pkg/auth/authorizer/node,
// v1.37, where AuthorizeNodeWithSelectors is always on), for kubelets:
// users "system:node:NAME" in the system:nodes group. Other users get
// NoOpinion. It never denies: what it does not allow falls through to the
// next authorizer, with its reason kept for the 403 message. A kubelet
// may
//   - get, list and watch only its own Node (a list or watch must name it
//     with fieldSelector=metadata.name=NAME), and create, update and patch
//     Nodes and their status (NodeRestriction keeps it to its own);
//   - list and watch pods only with fieldSelector=spec.nodeName=NAME, get
//     only the pods bound to it, and create and delete pods, write pod
//     status and create evictions (NodeRestriction keeps these to mirror
//     pods and pods bound to it);
//   - get, list and watch (by name) the secrets and config maps its pods
//     reference, get their claims (and write the claims' status), the
//     volumes bound to those claims, and their service accounts, whose
//     tokens it may create (NodeRestriction binds a token to one of its
//     pods);
//   - get the volume attachments, resource slices and pod certificate
//     requests naming it, list them only with its nodeName field selector,
//     and reach only its own CSINode and Lease in kube-node-lease;
//   - and, by the static node rules (NodeRules), everything else the
//     system:node role grants (events, services, CSRs, reviews, ...).
//
// The relationships of pods and volumes are kept in a NodeGraph, updated
// as they change, as Kubernetes' graph holds them: a mirror pod relates
// only itself to its node, a claim's volume through the volume's claimRef.
// A check looks them up; it decodes nothing.
type Node struct {
	graph   *NodeGraph
	objects NodeObjects
	rules   []api.PolicyRule
}

var _ Authorizer = (*Node)(nil)

// NewNode returns a Node authorizer reading graph, and objects for the
// volume attachments, resource slices and pod certificate requests.
func NewNode(graph *NodeGraph, objects NodeObjects) *Node {
	return &Node{graph: graph, objects: objects, rules: NodeRules()}
}

// Object kinds the graph relates to nodes.
type vertexKind int

const (
	secretVertex vertexKind = iota
	configMapVertex
	pvcVertex
	pvVertex
	resourceClaimVertex
	serviceAccountVertex
	podVertex
	volumeAttachmentVertex
	resourceSliceVertex
	podCertificateRequestVertex
)

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
			return n.readNamespaced(node, secretVertex, a)
		case "/configmaps":
			return n.readNamespaced(node, configMapVertex, a)
		case "/persistentvolumeclaims":
			if a.Subresource == "status" {
				return n.statusUpdate(node, pvcVertex, a)
			}
			return n.get(node, pvcVertex, a)
		case "/persistentvolumes":
			return n.get(node, pvVertex, a)
		case "resource.k8s.io/resourceclaims":
			return n.get(node, resourceClaimVertex, a)
		case "storage.k8s.io/volumeattachments":
			return n.get(node, volumeAttachmentVertex, a)
		case "/serviceaccounts":
			// KubeletServiceAccountTokenForCredentialProviders and
			// PodCertificateRequest are on by default in v1.37.
			if a.Verb == "get" && a.Subresource == "" {
				return n.readNamespaced(node, serviceAccountVertex, a)
			}
			return n.createToken(node, a)
		case "coordination.k8s.io/leases":
			return lease(node, a)
		case "storage.k8s.io/csinodes":
			return csiNode(node, a)
		case "resource.k8s.io/resourceslices":
			return n.resourceSlice(node, a)
		case "/nodes":
			return nodeObject(node, a)
		case "/pods":
			return n.pod(node, a)
		case api.CertificatesGroupName + "/podcertificaterequests":
			return n.podCertificateRequest(node, a)
		}
	}
	if RulesAllow(a, n.rules...) {
		return Allow, "", nil
	}
	return NoOpinion, "", nil
}

// statusUpdate: update and patch of the status of an object related to
// the node.
func (n *Node) statusUpdate(node string, kind vertexKind, a Attributes) (Decision, string, error) {
	switch a.Verb {
	case "update", "patch":
	default:
		return NoOpinion, "can only get/update/patch this type", nil
	}
	if a.Subresource != "status" {
		return NoOpinion, "can only update status subresource", nil
	}
	return n.related(node, kind, a)
}

// get: a get of one object related to the node.
func (n *Node) get(node string, kind vertexKind, a Attributes) (Decision, string, error) {
	if a.Verb != "get" {
		return NoOpinion, "can only get individual resources of this type", nil
	}
	if a.Subresource != "" {
		return NoOpinion, "cannot get subresource", nil
	}
	return n.related(node, kind, a)
}

// readNamespaced: a get, or a list or watch naming one object
// (fieldSelector=metadata.name=NAME), of a namespaced object related to
// the node.
func (n *Node) readNamespaced(node string, kind vertexKind, a Attributes) (Decision, string, error) {
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
	return n.related(node, kind, a)
}

func (n *Node) related(node string, kind vertexKind, a Attributes) (Decision, string, error) {
	if a.Name == "" {
		return NoOpinion, "No Object name found", nil
	}
	if !n.hasPath(node, kind, a.Namespace, a.Name) {
		return NoOpinion, noRelationship(node), nil
	}
	return Allow, "", nil
}

func noRelationship(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

// createToken: tokens (serviceaccounts/NAME/token) of the service accounts
// of the node's pods.
func (n *Node) createToken(node string, a Attributes) (Decision, string, error) {
	if a.Verb != "create" || a.Name == "" {
		return NoOpinion, "can only create tokens for individual service accounts", nil
	}
	if a.Subresource != "token" {
		return NoOpinion, "can only create token subresource of serviceaccount", nil
	}
	if !n.hasPath(node, serviceAccountVertex, a.Namespace, a.Name) {
		return NoOpinion, noRelationship(node), nil
	}
	return Allow, "", nil
}

// hasPath reports whether the object namespace/name of kind is related to
// node, as a path to the node in Kubernetes' graph.
func (n *Node) hasPath(node string, kind vertexKind, namespace, name string) bool {
	switch kind {
	case podVertex:
		bound, found := n.graph.podNode(namespace, name)
		return found && bound != "" && bound == node
	case volumeAttachmentVertex:
		return n.boundTo(node, "volumeattachments", "", name)
	case resourceSliceVertex:
		return n.boundTo(node, "resourceslices", "", name)
	case podCertificateRequestVertex:
		return n.boundTo(node, "podcertificaterequests", namespace, name)
	case pvVertex:
		return n.graph.volumeUsed(node, name)
	case resourceClaimVertex:
		// minik8s' pods have no resourceClaims: no claim relates to a node.
		return false
	case secretVertex:
		return n.graph.references(node, kind, namespace, name) || n.graph.volumeSecretUsed(node, namespace, name)
	}
	return n.graph.references(node, kind, namespace, name)
}

func (n *Node) boundTo(node, resource, namespace, name string) bool {
	bound, found := n.objects.NodeOf(resource, namespace, name)
	return found && bound != "" && bound == node
}

// lease: a node's heartbeat Lease is named after the node in
// kube-node-lease; a create names its object in the body, which
// NodeRestriction checks.
func lease(node string, a Attributes) (Decision, string, error) {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return NoOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if a.Namespace != api.NamespaceNodeLease {
		return NoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", api.NamespaceNodeLease), nil
	}
	if a.Verb != "create" && a.Name != node {
		return NoOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return Allow, "", nil
}

// csiNode: a node's CSINode is named after the node. Its status needs
// CSIVolumeHealth, off by default in v1.37.
func csiNode(node string, a Attributes) (Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get", "create", "update", "patch", "delete":
		default:
			return NoOpinion, "can only get, create, update, patch, or delete a CSINode", nil
		}
	case "status":
		return NoOpinion, "CSINode status access requires CSIVolumeHealth feature", nil
	default:
		return NoOpinion, "cannot authorize CSINode subresources", nil
	}
	if a.Verb != "create" && a.Name != node {
		return NoOpinion, "can only access CSINode with the same name as the requesting node", nil
	}
	return Allow, "", nil
}

// resourceSlice: slices naming the node; a list, watch or deletecollection
// must select them with fieldSelector=spec.nodeName=NAME.
func (n *Node) resourceSlice(node string, a Attributes) (Decision, string, error) {
	if a.Subresource != "" {
		return NoOpinion, "cannot authorize ResourceSlice subresources", nil
	}
	switch a.Verb {
	case "create":
		// NodeRestriction checks the created slice's node.
		return Allow, "", nil
	case "get", "update", "patch", "delete":
		return n.related(node, resourceSliceVertex, a)
	case "watch", "list", "deletecollection":
		if a.fieldSelectorRequires("spec.nodeName", node) {
			return Allow, "", nil
		}
		return NoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector", nil
	}
	return NoOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection", nil
}

// podCertificateRequest: requests naming the node (PodCertificateRequest
// is on by default in v1.37).
func (n *Node) podCertificateRequest(node string, a Attributes) (Decision, string, error) {
	if a.Subresource != "" {
		return NoOpinion, "nodes may not access the status subresource of PodCertificateRequests", nil
	}
	switch a.Verb {
	case "create":
		// NodeRestriction checks the request's node and pod.
		return Allow, "", nil
	case "get":
		return n.related(node, podCertificateRequestVertex, a)
	case "list", "watch":
		if a.fieldSelectorRequires("spec.nodeName", node) {
			return Allow, "", nil
		}
		return NoOpinion, "can only list/watch podcertificaterequests with nodeName field selector", nil
	}
	return NoOpinion, fmt.Sprintf("nodes may not %s podcertificaterequests", a.Verb), nil
}

// nodeObject: only the node's own Node may be read, compared by name so a
// kubelet can look for its Node before registering it; writes are left to
// NodeRestriction.
func nodeObject(node string, a Attributes) (Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "create", "update", "patch":
			return Allow, "", nil
		case "get", "list", "watch":
			switch a.Name {
			case node:
				return Allow, "", nil
			case "":
				return NoOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node), nil
			default:
				return NoOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, a.Name), nil
			}
		}
	case "status":
		switch a.Verb {
		case "update", "patch":
			return Allow, "", nil
		}
	}
	return NoOpinion, "", nil
}

// pod: a get of a pod bound to the node; a list or watch selecting
// spec.nodeName=NAME, or naming one pod bound to it; creates, deletes,
// status writes and evictions are left to NodeRestriction (mirror pods,
// pods bound to the node).
func (n *Node) pod(node string, a Attributes) (Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get":
			return n.get(node, podVertex, a)
		case "list", "watch":
			if a.fieldSelectorRequires("spec.nodeName", node) {
				return Allow, "", nil
			}
			if a.Name != "" {
				return n.related(node, podVertex, a)
			}
			return NoOpinion, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			return Allow, "", nil
		}
	case "status":
		switch a.Verb {
		case "update", "patch":
			return Allow, "", nil
		}
	case "eviction":
		if a.Verb == "create" {
			return Allow, "", nil
		}
	}
	return NoOpinion, "", nil
}
