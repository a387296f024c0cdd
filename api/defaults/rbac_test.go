package defaults

import (
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestBindingDefaults(t *testing.T) {
	t.Parallel()
	subjects := func() []api.Subject {
		return []api.Subject{
			{Kind: api.UserKind, Name: "alice"},
			{Kind: api.GroupKind, Name: "devs"},
			{Kind: api.ServiceAccountKind, Name: "sa", Namespace: "ns"},
			{Kind: api.UserKind, APIGroup: "example.com", Name: "kept"},
			{Kind: "Robot", Name: "unknown kinds are left to validation"},
		}
	}
	want := []api.Subject{
		{Kind: api.UserKind, APIGroup: api.RBACGroupName, Name: "alice"},
		{Kind: api.GroupKind, APIGroup: api.RBACGroupName, Name: "devs"},
		{Kind: api.ServiceAccountKind, Name: "sa", Namespace: "ns"},
		{Kind: api.UserKind, APIGroup: "example.com", Name: "kept"},
		{Kind: "Robot", Name: "unknown kinds are left to validation"},
	}
	rb := &api.RoleBinding{Subjects: subjects(), RoleRef: api.RoleRef{Kind: "Role", Name: "r"}}
	Default(rb)
	if rb.RoleRef.APIGroup != api.RBACGroupName || !reflect.DeepEqual(rb.Subjects, want) {
		t.Errorf("role binding defaults: %+v", rb)
	}
	crb := &api.ClusterRoleBinding{Subjects: subjects(), RoleRef: api.RoleRef{APIGroup: "other", Kind: "ClusterRole", Name: "r"}}
	Default(crb)
	if crb.RoleRef.APIGroup != "other" || !reflect.DeepEqual(crb.Subjects, want) {
		t.Errorf("cluster role binding defaults: %+v", crb)
	}
	// Idempotent.
	again := api.DeepCopy(crb)
	Default(again)
	if !reflect.DeepEqual(again, crb) {
		t.Errorf("second Default changed %+v to %+v", crb, again)
	}
	// Roles have no defaults.
	role := &api.ClusterRole{Rules: []api.PolicyRule{{Verbs: []string{"get"}}}}
	Default(role)
	if !reflect.DeepEqual(role, &api.ClusterRole{Rules: []api.PolicyRule{{Verbs: []string{"get"}}}}) {
		t.Errorf("cluster role changed: %+v", role)
	}
}

func TestCSRDefaults(t *testing.T) {
	t.Parallel()
	csr := &api.CertificateSigningRequest{Status: api.CertificateSigningRequestStatus{Conditions: []api.CertificateSigningRequestCondition{
		{Type: api.CertificateApproved},
		{Type: api.CertificateFailed, Status: api.ConditionFalse},
	}}}
	Default(csr)
	if got := csr.Status.Conditions; got[0].Status != api.ConditionTrue || got[1].Status != api.ConditionFalse {
		t.Errorf("conditions = %+v", got)
	}
	if csr.Spec.Usages != nil || csr.Spec.SignerName != "" {
		t.Errorf("v1 defaults neither usages nor signerName: %+v", csr.Spec)
	}
}
