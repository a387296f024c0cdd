package api

import (
	"bytes"
	"encoding/json"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The RBAC and certificates kinds encode as Kubernetes' own types: every
// field filled, Kubernetes accepts the JSON with no unknown field, and what
// it writes back decodes to the same bytes.
func TestRBACAndCertificatesJSONMatchKubernetes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ours   func() any
		theirs func() any
	}{
		{"Role", func() any { return filled[Role]() }, func() any { return &rbacv1.Role{} }},
		{"ClusterRole", func() any { return filled[ClusterRole]() }, func() any { return &rbacv1.ClusterRole{} }},
		{"RoleBinding", func() any { return filled[RoleBinding]() }, func() any { return &rbacv1.RoleBinding{} }},
		{"ClusterRoleBinding", func() any { return filled[ClusterRoleBinding]() }, func() any { return &rbacv1.ClusterRoleBinding{} }},
		{"ClusterRoleList", func() any { return filled[ClusterRoleList]() }, func() any { return &rbacv1.ClusterRoleList{} }},
		{"CertificateSigningRequest", func() any { return filled[CertificateSigningRequest]() },
			func() any { return &certificatesv1.CertificateSigningRequest{} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data, err := json.Marshal(tc.ours())
			if err != nil {
				t.Fatal(err)
			}
			theirs := tc.theirs()
			if err := strictDecode(data, theirs); err != nil {
				t.Fatalf("Kubernetes' %T rejects our JSON: %v\n%s", theirs, err, data)
			}
			back, err := json.Marshal(theirs)
			if err != nil {
				t.Fatal(err)
			}
			again := tc.ours()
			if err := strictDecode(back, again); err != nil {
				t.Fatalf("our type rejects Kubernetes' JSON: %v\n%s", err, back)
			}
			data2, _ := json.Marshal(again)
			if !bytes.Equal(data, data2) {
				t.Errorf("round trip through Kubernetes changed the object:\nours:  %s\nafter: %s", data, data2)
			}
		})
	}
}

// Empty rules are written as null, as Kubernetes writes them, and a
// binding's roleRef is always present.
func TestRBACEmptyEncoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		obj  any
		want string
	}{
		{&ClusterRole{ObjectMeta: ObjectMeta{Name: "a"}}, `{"metadata":{"name":"a"},"rules":null}`},
		{&RoleBinding{ObjectMeta: ObjectMeta{Name: "b"}}, `{"metadata":{"name":"b"},"roleRef":{"apiGroup":"","kind":"","name":""}}`},
		{&CertificateSigningRequest{ObjectMeta: ObjectMeta{Name: "c"}}, `{"metadata":{"name":"c"},"spec":{"request":null,"signerName":""}}`},
	} {
		got, err := json.Marshal(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%T encodes as %s, want %s", tc.obj, got, tc.want)
		}
		// Kubernetes writes the same bytes for the same object.
		var theirs any
		switch tc.obj.(type) {
		case *ClusterRole:
			theirs = &rbacv1.ClusterRole{}
		case *RoleBinding:
			theirs = &rbacv1.RoleBinding{}
		case *CertificateSigningRequest:
			theirs = &certificatesv1.CertificateSigningRequest{}
		}
		if err := json.Unmarshal(got, theirs); err != nil {
			t.Fatal(err)
		}
		back, _ := json.Marshal(theirs)
		var a, b map[string]any
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal(back, &b)
		// Kubernetes writes an empty status as {}; minik8s omits it, as
		// for every kind.
		delete(b["metadata"].(map[string]any), "creationTimestamp")
		if st, ok := b["status"].(map[string]any); ok && len(st) == 0 {
			delete(b, "status")
		}
		if sa, sb := mustJSON(a), mustJSON(b); sa != sb {
			t.Errorf("%T: ours %s, Kubernetes %s", tc.obj, sa, sb)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRBACAndCertificatesResources(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typed, group, resource, kind string
		namespaced                   bool
		subresources                 []string
	}{
		{"roles", RBACGroupName, "roles", "Role", true, nil},
		{"role", RBACGroupName, "roles", "Role", true, nil},
		{"clusterroles", RBACGroupName, "clusterroles", "ClusterRole", false, nil},
		{"rolebinding", RBACGroupName, "rolebindings", "RoleBinding", true, nil},
		{"clusterrolebindings.rbac.authorization.k8s.io", RBACGroupName, "clusterrolebindings", "ClusterRoleBinding", false, nil},
		{"csr", CertificatesGroupName, "certificatesigningrequests", "CertificateSigningRequest", false, []string{"status", "approval"}},
	} {
		r, ok := FindResource(tc.typed)
		if !ok {
			t.Errorf("FindResource(%q) found nothing", tc.typed)
			continue
		}
		if r.Group != tc.group || r.Resource != tc.resource || r.Kind != tc.kind || r.Namespaced != tc.namespaced {
			t.Errorf("FindResource(%q) = %s/%s %s namespaced=%t", tc.typed, r.Group, r.Resource, r.Kind, r.Namespaced)
		}
		for _, sub := range tc.subresources {
			if !r.HasSubresource(sub) {
				t.Errorf("%s has no %s subresource", r.Resource, sub)
			}
		}
	}
}

// DeepCopy shares nothing mutable for the new kinds either.
func TestRBACDeepCopy(t *testing.T) {
	t.Parallel()
	in := filled[ClusterRole]()
	out := DeepCopy(in)
	out.Rules[0].Verbs[0] = "changed"
	out.AggregationRule.ClusterRoleSelectors[0].MatchLabels["k"] = "changed"
	if in.Rules[0].Verbs[0] == "changed" {
		t.Error("copy shares rules")
	}
	for _, v := range in.AggregationRule.ClusterRoleSelectors[0].MatchLabels {
		if v == "changed" {
			t.Error("copy shares selectors")
		}
	}
	csr := filled[CertificateSigningRequest]()
	c2 := DeepCopy(csr)
	c2.Spec.Request[0]++
	for k := range c2.Spec.Extra {
		c2.Spec.Extra[k][0] = "changed"
	}
	if bytes.Equal(csr.Spec.Request, c2.Spec.Request) {
		t.Error("copy shares the request bytes")
	}
	for _, v := range csr.Spec.Extra {
		if v[0] == "changed" {
			t.Error("copy shares extra")
		}
	}
}
