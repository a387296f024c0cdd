package api

// RBACGroupName is the API group of the RBAC kinds.
const RBACGroupName = "rbac.authorization.k8s.io"

// Wildcards a PolicyRule may use, and the subject kinds a binding may name.
const (
	APIGroupAll    = "*"
	ResourceAll    = "*"
	VerbAll        = "*"
	NonResourceAll = "*"

	UserKind           = "User"
	GroupKind          = "Group"
	ServiceAccountKind = "ServiceAccount"

	// AutoUpdateAnnotationKey marks default roles and bindings the apiserver
	// may reconcile on start.
	AutoUpdateAnnotationKey = "rbac.authorization.kubernetes.io/autoupdate"
)

// PolicyRule (rbac.authorization.k8s.io/v1) describes what actions a role
// allows: verbs on resources of API groups (optionally only the named
// ones), or verbs on non-resource URLs.
type PolicyRule struct {
	Verbs         []string `json:"verbs"`
	APIGroups     []string `json:"apiGroups,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
	// NonResourceURLs are paths such as "/healthz" or "/api/*" (a trailing
	// "*" is a prefix match); only cluster roles may have them.
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// Breakdown splits r into rules of one group, resource, verb and resource
// name, and one non-resource URL and verb each: the form in which kubectl
// prints rules (BreakdownRule) and the apiserver compares them when it
// checks that a role grants nothing its writer lacks.
func (r PolicyRule) Breakdown() []PolicyRule {
	var out []PolicyRule
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if len(r.ResourceNames) == 0 {
					out = append(out, PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
					continue
				}
				for _, n := range r.ResourceNames {
					out = append(out, PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: []string{n}})
				}
			}
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, v := range r.Verbs {
			out = append(out, PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

// Subject is who a binding grants a role to: a User, a Group or a
// ServiceAccount (by namespace and name).
type Subject struct {
	Kind string `json:"kind"`
	// APIGroup is "rbac.authorization.k8s.io" for User and Group subjects
	// (defaulted) and "" for ServiceAccount.
	APIGroup  string `json:"apiGroup,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// RoleRef names the role a binding grants. It cannot change once the
// binding exists.
type RoleRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Role is a namespaced set of rules.
type Role struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	// Rules is written as null when empty, as Kubernetes writes it.
	Rules []PolicyRule `json:"rules"`
}

// RoleList is a list of Roles.
type RoleList = List[Role]

// ClusterRole is a cluster-wide set of rules; a RoleBinding may grant it
// within one namespace, a ClusterRoleBinding everywhere.
type ClusterRole struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Rules      []PolicyRule `json:"rules"`
	// AggregationRule is kept for manifests; minik8s runs no aggregation
	// controller, so its selectors do not fill Rules.
	AggregationRule *AggregationRule `json:"aggregationRule,omitempty"`
}

// ClusterRoleList is a list of ClusterRoles.
type ClusterRoleList = List[ClusterRole]

// AggregationRule selects the cluster roles whose rules are combined into one.
type AggregationRule struct {
	ClusterRoleSelectors []LabelSelector `json:"clusterRoleSelectors,omitempty"`
}

// RoleBinding grants a Role of its namespace, or a ClusterRole, to subjects
// within its namespace.
type RoleBinding struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Subjects   []Subject `json:"subjects,omitempty"`
	RoleRef    RoleRef   `json:"roleRef"`
}

// RoleBindingList is a list of RoleBindings.
type RoleBindingList = List[RoleBinding]

// ClusterRoleBinding grants a ClusterRole to subjects in every namespace
// and for cluster-scoped resources.
type ClusterRoleBinding struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Subjects   []Subject `json:"subjects,omitempty"`
	RoleRef    RoleRef   `json:"roleRef"`
}

// ClusterRoleBindingList is a list of ClusterRoleBindings.
type ClusterRoleBindingList = List[ClusterRoleBinding]
