package defaults

import "github.com/minik8s/minik8s/api"

// RoleBinding defaults a role binding as Kubernetes' SetDefaults_RoleBinding
// and SetDefaults_Subject do: roleRef.apiGroup rbac.authorization.k8s.io,
// and the same group for User and Group subjects.
func RoleBinding(b *api.RoleBinding) { binding(&b.RoleRef, b.Subjects) }

// ClusterRoleBinding defaults a cluster role binding like RoleBinding.
func ClusterRoleBinding(b *api.ClusterRoleBinding) { binding(&b.RoleRef, b.Subjects) }

func binding(ref *api.RoleRef, subjects []api.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = api.RBACGroupName
	}
	for i := range subjects {
		Subject(&subjects[i])
	}
}

// Subject gives User and Group subjects without an apiGroup the RBAC
// group; ServiceAccount subjects keep the core group "".
func Subject(s *api.Subject) {
	if s.APIGroup != "" {
		return
	}
	switch s.Kind {
	case api.UserKind, api.GroupKind:
		s.APIGroup = api.RBACGroupName
	}
}
