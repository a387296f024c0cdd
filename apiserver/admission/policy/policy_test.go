package policy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/admission"
)

type fakeSource struct {
	policies []*api.ValidatingAdmissionPolicy
	bindings []*api.ValidatingAdmissionPolicyBinding
	params   []api.Object
}

func (f *fakeSource) ValidatingAdmissionPolicies() []*api.ValidatingAdmissionPolicy {
	return f.policies
}
func (f *fakeSource) ValidatingAdmissionPolicyBindings() []*api.ValidatingAdmissionPolicyBinding {
	return f.bindings
}

func (f *fakeSource) ParamObjects(r api.ResourceInfo, ns, name string, sel labels.Selector) ([]api.Object, error) {
	var out []api.Object
	for _, o := range f.params {
		m := o.GetObjectMeta()
		if m.Namespace == ns && (name == "" || m.Name == name) && sel.Matches(labels.Set(m.Labels)) {
			out = append(out, o)
		}
	}
	return out, nil
}

func (f *fakeSource) ParamResource(apiVersion, kind string) (api.ResourceInfo, bool) {
	return api.LookupKind(apiVersion, kind)
}

func (f *fakeSource) Namespace(_ context.Context, name string) (*api.Namespace, bool, error) {
	return &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"team": "a"}}}, true, nil
}

func rules() *api.MatchResources {
	return &api.MatchResources{ResourceRules: []api.NamedRuleWithOperations{{RuleWithOperations: api.RuleWithOperations{
		Operations: []api.OperationType{"CREATE"}, Rule: api.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}}
}

// Every param a selector finds is evaluated; the first refusal answers, in
// kube's words, with the namespace object and params bound.
func TestParamsBySelector(t *testing.T) {
	t.Parallel()
	pol := &api.ValidatingAdmissionPolicy{ObjectMeta: api.ObjectMeta{Name: "p", ResourceVersion: "1"},
		Spec: api.ValidatingAdmissionPolicySpec{ParamKind: &api.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, MatchConstraints: rules(),
			Validations: []api.Validation{{Expression: "object.metadata.name != params.data.forbidden",
				MessageExpression: "'name ' + object.metadata.name + ' is forbidden in team ' + namespaceObject.metadata.labels.team"}}}}
	defaults.Default(pol)
	deny := api.ParameterNotFoundDeny
	b := &api.ValidatingAdmissionPolicyBinding{ObjectMeta: api.ObjectMeta{Name: "b"}, Spec: api.ValidatingAdmissionPolicyBindingSpec{
		PolicyName: "p", ValidationActions: []api.ValidationAction{"Deny"},
		ParamRef: &api.ParamRef{Selector: &api.LabelSelector{MatchLabels: map[string]string{"kind": "rule"}}, ParameterNotFoundAction: &deny}}}
	src := &fakeSource{policies: []*api.ValidatingAdmissionPolicy{pol}, bindings: []*api.ValidatingAdmissionPolicyBinding{b}}
	for _, n := range []string{"x", "y"} {
		src.params = append(src.params, &api.ConfigMap{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: api.ObjectMeta{Name: "rule-" + n, Namespace: "ns", Labels: map[string]string{"kind": "rule"}}, Data: map[string]string{"forbidden": n}})
	}
	pl := New(Config{Source: src, Params: src, Namespaces: src})
	cms, _ := api.LookupResource("", "configmaps")
	create := func(ns, name string) error {
		return pl.Validate(t.Context(), &admission.Attributes{Operation: admission.Create, Resource: cms, Namespace: ns, Name: name,
			Object: &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns}}})
	}
	if err := create("ns", "z"); err != nil {
		t.Errorf("allowed name refused: %v", err)
	}
	err := create("ns", "y")
	var se *apierrors.StatusError
	want := `configmaps "y" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: name y is forbidden in team a`
	if !errors.As(err, &se) || se.ErrStatus.Code != 422 || se.ErrStatus.Message != want {
		t.Errorf("refusal = %v, want 422 %q", err, want)
	}
	// No params in another namespace, parameterNotFoundAction Deny.
	if err := create("other", "z"); err == nil || !strings.Contains(err.Error(), "no params found for policy binding with `Deny` parameterNotFoundAction") {
		t.Errorf("without params: %v", err)
	}
	// A namespaced param for a cluster-scoped request.
	nodes, _ := api.LookupResource("", "nodes")
	pol.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"nodes"}
	pol.ResourceVersion = "2"
	err = pl.Validate(t.Context(), &admission.Attributes{Operation: admission.Create, Resource: nodes, Name: "n",
		Object: &api.Node{ObjectMeta: api.ObjectMeta{Name: "n"}}})
	if err == nil || !strings.Contains(err.Error(), "failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources") {
		t.Errorf("namespaced params for a node: %v", err)
	}
}
