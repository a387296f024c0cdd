package validation

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

func TestValidateObjectMeta(t *testing.T) {
	t.Parallel()
	m := field.NewPath("metadata")
	tests := []struct {
		name       string
		meta       api.ObjectMeta
		namespaced bool
		nameFn     NameFunc
		want       []string
	}{
		{"valid", api.ObjectMeta{Name: "a.b-c", Namespace: "ns"}, true, naming.NameIsDNSSubdomain, nil},
		{"name required", api.ObjectMeta{Namespace: "ns"}, true, naming.NameIsDNSSubdomain, []string{
			"metadata.name: Required value: name or generateName is required"}},
		{"generateName prefix may end in a dash", api.ObjectMeta{Name: "web-x1y2z", GenerateName: "web-", Namespace: "ns"}, true, naming.NameIsDNSSubdomain, nil},
		{"bad generateName", api.ObjectMeta{Name: "ok", GenerateName: "Web-", Namespace: "ns"}, true, naming.NameIsDNSSubdomain, []string{
			`metadata.generateName: Invalid value: "Web-": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"namespace forbidden for cluster kinds", api.ObjectMeta{Name: "n", Namespace: "ns"}, false, naming.NameIsDNSSubdomain, []string{
			"metadata.namespace: Forbidden: not allowed on this type"}},
		{"bad namespace", api.ObjectMeta{Name: "n", Namespace: "Team.A"}, true, naming.NameIsDNSSubdomain, []string{
			`metadata.namespace: Invalid value: "Team.A": a lowercase RFC 1123 label must consist of ...`}},
		{"DNS-1035 name", api.ObjectMeta{Name: "1web", Namespace: "ns"}, true, naming.NameIsDNS1035Label, []string{
			`metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`}},
		{"labels", api.ObjectMeta{Name: "n", Namespace: "ns", Labels: map[string]string{"bad key": "ok", "good": "bad value!"}}, true, naming.NameIsDNSSubdomain, []string{
			`metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`metadata.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		}},
		{"annotations too big and bad key", api.ObjectMeta{Name: "n", Namespace: "ns", Annotations: map[string]string{
			"a": strings.Repeat("x", TotalAnnotationSizeLimitB), "bad/key/x": ""}}, true, naming.NameIsDNSSubdomain, []string{
			`metadata.annotations: Invalid value: "bad/key/x": a valid label key must consist of alphanumeric characters, ...with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
			"metadata.annotations: Too long: may not be more than 262144 bytes",
		}},
		{"owner references", api.ObjectMeta{Name: "n", Namespace: "ns", OwnerReferences: []api.OwnerReference{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1", Controller: ptr(true)},
			{APIVersion: "a/b/c", Kind: "", Name: "", UID: ""},
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "u2", Controller: ptr(true)},
		}}, true, naming.NameIsDNSSubdomain, []string{
			`metadata.ownerReferences[1].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>`,
			"metadata.ownerReferences[1].kind: Required value: must not be empty",
			"metadata.ownerReferences[1].name: Required value: must not be empty",
			"metadata.ownerReferences[1].uid: Required value: must not be empty",
			`metadata.ownerReferences: Invalid value: []api.OwnerReference{...}: Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/rs and Deployment/d`,
		}},
		{"finalizers", api.ObjectMeta{Name: "n", Namespace: "ns", Finalizers: []string{"kubernetes", "example.com/ok", "mine", "orphan", "foregroundDeletion"}},
			true, naming.NameIsDNSSubdomain, []string{
				`metadata.finalizers[2]: Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified`,
				`metadata.finalizers: Invalid value: []string{"kubernetes", "example.com/ok", "mine", "orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set`,
			}},
		{"negative generation", api.ObjectMeta{Name: "n", Namespace: "ns", Generation: -1}, true, naming.NameIsDNSSubdomain, []string{
			"metadata.generation: Invalid value: -1: must be greater than or equal to 0"}},
	}
	for _, tc := range tests {
		checkErrs(t, tc.name, ValidateObjectMeta(&tc.meta, tc.namespaced, tc.nameFn, m), tc.want)
	}
}

func TestValidateObjectMetaUpdate(t *testing.T) {
	t.Parallel()
	now := api.Now()
	old := api.ObjectMeta{Name: "n", Namespace: "ns", UID: "u", ResourceVersion: "3", Generation: 2, CreationTimestamp: now,
		DeletionTimestamp: &now, Finalizers: []string{"example.com/a"}}
	tests := []struct {
		name   string
		mutate func(*api.ObjectMeta)
		want   []string
	}{
		{"same", func(*api.ObjectMeta) {}, nil},
		{"finalizer removed during deletion", func(m *api.ObjectMeta) { m.Finalizers = nil }, nil},
		{"finalizer added during deletion", func(m *api.ObjectMeta) { m.Finalizers = append(m.Finalizers, "example.com/b") }, []string{
			`metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}`}},
		{"generation decremented", func(m *api.ObjectMeta) { m.Generation = 1 }, []string{
			"metadata.generation: Invalid value: 1: must not be decremented"}},
		{"namespace and deletion grace", func(m *api.ObjectMeta) {
			m.Namespace = "other"
			m.DeletionGracePeriodSeconds = ptr(int64(30))
		}, []string{
			`metadata.namespace: Invalid value: "other": field is immutable`,
			"metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
		}},
	}
	for _, tc := range tests {
		m := old
		m.Finalizers = append([]string(nil), old.Finalizers...)
		tc.mutate(&m)
		checkErrs(t, tc.name, ValidateObjectMetaUpdate(&m, &old, field.NewPath("metadata")), tc.want)
	}
}

func TestValidateLabelSelector(t *testing.T) {
	t.Parallel()
	sel := &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{
		{Key: "a", Operator: "In"},
		{Key: "b", Operator: "Exists", Values: []string{"x"}},
		{Key: "c", Operator: "Matches", Values: []string{"x"}},
		{Key: "d", Operator: "In", Values: []string{"bad value"}},
	}}
	checkErrs(t, "selector", ValidateLabelSelector(sel, LabelSelectorOptions{}, field.NewPath("spec", "selector")), []string{
		"spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
		"spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
		`spec.selector.matchExpressions[2].operator: Invalid value: "Matches": not a valid selector operator`,
		`spec.selector.matchExpressions[3].values[0]: Invalid value: "bad value": a valid label must be ...`,
	})
}

func TestSemanticEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b any
		want bool
	}{
		{api.ResourceList{api.ResourceCPU: q("1")}, api.ResourceList{api.ResourceCPU: q("1000m")}, true},
		{api.ResourceList{api.ResourceCPU: q("1")}, api.ResourceList{api.ResourceCPU: q("2")}, false},
		{[]string(nil), []string{}, true},
		{map[string]string(nil), map[string]string{}, true},
		{map[string]string{"a": "b"}, map[string]string{"a": "c"}, false},
		{(*int32)(nil), ptr(int32(0)), false},
		{api.NewTime(api.Now().Time), api.NewTime(api.Now().Time.Local()), true},
	}
	for i, tc := range tests {
		if got := semanticEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("case %d: semanticEqual(%v, %v) = %t", i, tc.a, tc.b, got)
		}
	}
}
