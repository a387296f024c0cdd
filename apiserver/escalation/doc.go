// Package escalation keeps RBAC from being a ladder, as kube-apiserver's
// policy-based RBAC storage does (pkg/registry/rbac): a user may write a
// Role or ClusterRole only with rules she already holds, and a RoleBinding
// or ClusterRoleBinding only to a role whose rules she already holds;
// otherwise the write is refused with 403 `... is attempting to grant RBAC
// permissions not currently held:` and the missing rules. The exceptions
// are kube's: the "escalate" verb on the role (roles), the "bind" verb on
// the referenced role (bindings), and members of system:masters, the group
// of the cluster admin and of the apiserver's own loopback writes. The
// apiserver's in-process writes, which carry no user (the bootstrap
// policy), are its loopback writes and pass too.
//
// The requester's rules are read through authz.RBAC, the same RBAC data
// the authorizer decides with; Covers is kube's rule comparison
// (component-helpers/auth/rbac/validation) and the refusal lists the
// missing rules compacted and in kube's CompactString form.
package escalation
