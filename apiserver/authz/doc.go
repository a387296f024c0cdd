// Package authz decides whether an authenticated user may make a request,
// with Kubernetes' authorizers and semantics: an Authorizer answers Allow,
// Deny or NoOpinion for Attributes built from the parsed request
// (request.Info) and its user (request.User); Union asks several in order
// (first Allow or Deny wins); Filter runs one in front of the API handlers
// and answers a refusal with a 403 Status in kube-apiserver's words
// ("pods is forbidden: User "alice" cannot list resource "pods" in API
// group "" in the namespace "default"").
//
// The authorizers are RBAC (Role, ClusterRole, RoleBinding,
// ClusterRoleBinding read through a RuleSource), the Node authorizer
// (kubelets, "system:node:NAME" in "system:nodes", limited to their own
// Node, Lease, pods and what those pods reference, looked up in a
// NodeGraph the pod and volume watches keep current, as Kubernetes' graph;
// lists and watches must select the node's own objects, so
// Attributes carry the request's parsed field and label selectors),
// PrivilegedGroups (system:masters) and AlwaysAllow. Named gives an
// authorizer the name a Union puts before its reasons, as kube-apiserver
// does ("node: ...").
// BootstrapPolicy returns the default cluster roles and bindings
// kube-apiserver creates on start.
package authz
