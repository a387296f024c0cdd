package authz

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// RuleSource reads the RBAC objects, typically from the apiserver's watch
// caches. Implementations return stored objects, which RBAC only reads.
type RuleSource interface {
	ListClusterRoleBindings() []*api.ClusterRoleBinding
	ListRoleBindings(namespace string) []*api.RoleBinding
	GetClusterRole(name string) (*api.ClusterRole, bool)
	GetRole(namespace, name string) (*api.Role, bool)
}

// RBAC is Kubernetes' RBAC authorizer. A ClusterRoleBinding grants its
// ClusterRole's rules everywhere; a RoleBinding grants its Role (of the
// binding's namespace) or ClusterRole only for requests in its namespace.
// It allows or has no opinion, never denies: RBAC rules only add.
type RBAC struct {
	src RuleSource
}

var _ Authorizer = (*RBAC)(nil)

// NewRBAC returns an RBAC authorizer reading src.
func NewRBAC(src RuleSource) *RBAC { return &RBAC{src: src} }

// Authorize implements Authorizer. An allowed request's reason names the
// binding that allowed it (`RBAC: allowed by ClusterRoleBinding "x" of
// ClusterRole "y" to User "z"`); a refused one's reason lists the bindings
// of the user that point at missing roles, as kube-apiserver's does.
func (r *RBAC) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.User == nil {
		return NoOpinion, "", nil
	}
	var problems []string
	for _, b := range r.src.ListClusterRoleBindings() {
		i, ok := appliesTo(a, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := r.roleRules(b.RoleRef, "")
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if RulesAllow(a, rules...) {
			return Allow, fmt.Sprintf("RBAC: allowed by ClusterRoleBinding %q of %s %q to %s",
				b.Name, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(&b.Subjects[i], "")), nil
		}
	}
	if a.Namespace != "" {
		for _, b := range r.src.ListRoleBindings(a.Namespace) {
			i, ok := appliesTo(a, b.Subjects, b.Namespace)
			if !ok {
				continue
			}
			rules, err := r.roleRules(b.RoleRef, b.Namespace)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if RulesAllow(a, rules...) {
				return Allow, fmt.Sprintf("RBAC: allowed by RoleBinding %q of %s %q to %s",
					b.Name+"/"+b.Namespace, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(&b.Subjects[i], b.Namespace)), nil
			}
		}
	}
	switch len(problems) {
	case 0:
		return NoOpinion, "", nil
	case 1:
		return NoOpinion, "RBAC: " + problems[0], nil
	}
	return NoOpinion, "RBAC: [" + strings.Join(problems, ", ") + "]", nil
}

// roleRules returns the rules a binding in namespace (or a cluster
// binding, namespace "") refers to; a missing role is an error in
// Kubernetes' words (`clusterrole.rbac.authorization.k8s.io "x" not found`).
func (r *RBAC) roleRules(ref api.RoleRef, namespace string) ([]api.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		if namespace == "" {
			return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
		}
		role, ok := r.src.GetRole(namespace, ref.Name)
		if !ok {
			return nil, fmt.Errorf("role.%s %q not found", api.RBACGroupName, ref.Name)
		}
		return role.Rules, nil
	case "ClusterRole":
		role, ok := r.src.GetClusterRole(ref.Name)
		if !ok {
			return nil, fmt.Errorf("clusterrole.%s %q not found", api.RBACGroupName, ref.Name)
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// appliesTo returns the index of the first subject that is the request's
// user. A ServiceAccount subject without a namespace is in the binding's.
func appliesTo(a Attributes, subjects []api.Subject, namespace string) (int, bool) {
	for i := range subjects {
		if subjectMatches(a, &subjects[i], namespace) {
			return i, true
		}
	}
	return 0, false
}

func subjectMatches(a Attributes, s *api.Subject, namespace string) bool {
	switch s.Kind {
	case api.UserKind:
		return a.User.Name == s.Name
	case api.GroupKind:
		return slices.Contains(a.User.Groups, s.Name)
	case api.ServiceAccountKind:
		ns := namespace
		if s.Namespace != "" {
			ns = s.Namespace
		}
		return ns != "" && a.User.Name == ServiceAccountUserPrefix+ns+":"+s.Name
	}
	return false
}

func describeSubject(s *api.Subject, namespace string) string {
	if s.Kind == api.ServiceAccountKind {
		if s.Namespace != "" {
			namespace = s.Namespace
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+namespace)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}
