package matching

import (
	"context"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/admission"
)

func TestRuleMatches(t *testing.T) {
	t.Parallel()
	pods, _ := api.LookupResource("", "pods")
	namespaces, _ := api.LookupResource("", "namespaces")
	deployments, _ := api.LookupResource("apps", "deployments")
	scope := func(s api.ScopeType) *api.ScopeType { return &s }
	rule := func(ops []api.OperationType, groups, versions, resources []string, sc *api.ScopeType) api.RuleWithOperations {
		return api.RuleWithOperations{Operations: ops, Rule: api.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: sc}}
	}
	all := []string{"*"}
	create := []api.OperationType{"CREATE"}
	tests := []struct {
		name string
		rule api.RuleWithOperations
		op   admission.Operation
		res  api.ResourceInfo
		sub  string
		ns   string
		want bool
	}{
		{"exact", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, nil), admission.Create, pods, "", "default", true},
		{"other operation", rule(create, []string{""}, []string{"v1"}, []string{"pods"}, nil), admission.Update, pods, "", "default", false},
		{"operation *", rule([]api.OperationType{"*"}, all, all, []string{"pods"}, nil), admission.Delete, pods, "", "default", true},
		{"other group", rule(create, []string{"apps"}, all, all, nil), admission.Create, pods, "", "default", false},
		{"group and version *", rule(create, all, all, []string{"deployments"}, nil), admission.Create, deployments, "", "ns", true},
		{"other version", rule(create, all, []string{"v2"}, all, nil), admission.Create, pods, "", "ns", false},
		{"resource without subresource leaves subresources out", rule(create, all, all, []string{"pods"}, nil), admission.Create, pods, "status", "ns", false},
		{"resource/subresource", rule(create, all, all, []string{"pods/status"}, nil), admission.Create, pods, "status", "ns", true},
		{"* leaves subresources out", rule(create, all, all, all, nil), admission.Create, pods, "status", "ns", false},
		{"*/* matches subresources", rule(create, all, all, []string{"*/*"}, nil), admission.Create, pods, "status", "ns", true},
		{"pods/* matches pods", rule(create, all, all, []string{"pods/*"}, nil), admission.Create, pods, "", "ns", true},
		{"*/status", rule(create, all, all, []string{"*/status"}, nil), admission.Create, deployments, "status", "ns", true},
		{"*/status not scale", rule(create, all, all, []string{"*/status"}, nil), admission.Create, deployments, "scale", "ns", false},
		{"Namespaced scope", rule(create, all, all, all, scope(api.NamespacedScope)), admission.Create, pods, "", "ns", true},
		{"Cluster scope leaves namespaced out", rule(create, all, all, all, scope(api.ClusterScope)), admission.Create, pods, "", "ns", false},
		{"a Namespace is cluster-scoped", rule(create, all, all, all, scope(api.ClusterScope)), admission.Create, namespaces, "", "", true},
		{"a Namespace is not namespaced", rule(create, all, all, all, scope(api.NamespacedScope)), admission.Create, namespaces, "", "x", false},
	}
	for _, tt := range tests {
		if got := RuleMatches(&tt.rule, tt.op, tt.res, tt.sub, tt.ns); got != tt.want {
			t.Errorf("%s: RuleMatches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Core Events and events.k8s.io Events are equivalent, with conversions
// both ways.
func TestEquivalentEvents(t *testing.T) {
	t.Parallel()
	core, _ := api.LookupResource("", "events")
	eqs := Equivalents(core, "")
	if len(eqs) != 1 || eqs[0].Resource.Group != "events.k8s.io" {
		t.Fatalf("equivalents of core events = %+v", eqs)
	}
	ev := &api.Event{ObjectMeta: api.ObjectMeta{Name: "e", Namespace: "ns"}, Reason: "Started", Message: "hi"}
	v1 := eqs[0].ToTarget(ev).(*api.EventV1)
	if v1.Note != "hi" || eqs[0].FromTarget(v1).(*api.Event).Message != "hi" {
		t.Errorf("conversion lost the message: %+v", v1)
	}
	pods, _ := api.LookupResource("", "pods")
	if got := Equivalents(pods, ""); len(got) != 0 {
		t.Errorf("equivalents of pods = %+v", got)
	}
}

// autoscaling/v1 HPAs are equivalent to v2's: a rule for v2 alone
// matches a v1 request through its v2 conversion, and back.
func TestEquivalentHPAs(t *testing.T) {
	t.Parallel()
	var v1 api.ResourceInfo
	for _, r := range api.Resources {
		if r.GroupVersion() == "autoscaling/v1" && r.Resource == "horizontalpodautoscalers" {
			v1 = r
		}
	}
	eqs := Equivalents(v1, "status")
	if len(eqs) != 1 || eqs[0].Resource.Version != "v2" || eqs[0].Subresource != "status" {
		t.Fatalf("equivalents of autoscaling/v1 HPAs = %+v", eqs)
	}
	rule := api.RuleWithOperations{Operations: []api.OperationType{"UPDATE"},
		Rule: api.Rule{APIGroups: []string{"autoscaling"}, APIVersions: []string{"v2"}, Resources: []string{"horizontalpodautoscalers/status"}}}
	if RuleMatches(&rule, "UPDATE", v1, "status", "ns") || !RuleMatches(&rule, "UPDATE", eqs[0].Resource, "status", "ns") {
		t.Error("a v2 rule should match the v2 equivalent only")
	}
	pct := int32(60)
	h := &api.HorizontalPodAutoscalerV1{ObjectMeta: api.ObjectMeta{Name: "h"},
		Spec: api.HorizontalPodAutoscalerSpecV1{MaxReplicas: 3, TargetCPUUtilizationPercentage: &pct}}
	v2 := eqs[0].ToTarget(h).(*api.HorizontalPodAutoscaler)
	back := eqs[0].FromTarget(v2).(*api.HorizontalPodAutoscalerV1)
	if len(v2.Spec.Metrics) != 1 || back.Spec.TargetCPUUtilizationPercentage == nil || *back.Spec.TargetCPUUtilizationPercentage != 60 {
		t.Errorf("conversion: %+v -> %+v", v2.Spec, back.Spec)
	}
	v2info, _ := api.LookupResource("autoscaling", "horizontalpodautoscalers")
	if eqs := Equivalents(v2info, ""); len(eqs) != 1 || eqs[0].Resource.Version != "v1" {
		t.Errorf("equivalents of autoscaling/v2 HPAs = %+v", eqs)
	}
}

type fakeNamespaces map[string]*api.Namespace

func (f fakeNamespaces) Namespace(_ context.Context, name string) (*api.Namespace, bool, error) {
	ns, ok := f[name]
	return ns, ok, nil
}

// MatchResources as kube's policy matcher: exclusions win, resourceNames
// narrow a rule, no resourceRules match everything (a binding's), selectors
// first, a missing namespace is an error only for a request the rules match.
func TestMatchResources(t *testing.T) {
	t.Parallel()
	cms, _ := api.LookupResource("", "configmaps")
	secrets, _ := api.LookupResource("", "secrets")
	nss := fakeNamespaces{"prod": {ObjectMeta: api.ObjectMeta{Name: "prod", Labels: map[string]string{"env": "prod"}}}}
	rule := func(resources []string, names ...string) api.NamedRuleWithOperations {
		return api.NamedRuleWithOperations{ResourceNames: names, RuleWithOperations: api.RuleWithOperations{
			Operations: []api.OperationType{"*"}, Rule: api.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: resources}}}
	}
	exact := api.MatchPolicyExact
	prodOnly := &api.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	tests := []struct {
		name    string
		m       api.MatchResources
		res     api.ResourceInfo
		ns      string
		objName string
		want    bool
		wantErr bool
	}{
		{"rule", api.MatchResources{ResourceRules: []api.NamedRuleWithOperations{rule([]string{"configmaps"})}}, cms, "prod", "a", true, false},
		{"other resource", api.MatchResources{ResourceRules: []api.NamedRuleWithOperations{rule([]string{"configmaps"})}}, secrets, "prod", "a", false, false},
		{"no rules match all", api.MatchResources{}, secrets, "prod", "a", true, false},
		{"resourceNames", api.MatchResources{ResourceRules: []api.NamedRuleWithOperations{rule([]string{"configmaps"}, "b")}}, cms, "prod", "a", false, false},
		{"resourceNames match", api.MatchResources{ResourceRules: []api.NamedRuleWithOperations{rule([]string{"configmaps"}, "a")}}, cms, "prod", "a", true, false},
		{"excluded", api.MatchResources{ResourceRules: []api.NamedRuleWithOperations{rule([]string{"*"})},
			ExcludeResourceRules: []api.NamedRuleWithOperations{rule([]string{"configmaps"}, "a")}}, cms, "prod", "a", false, false},
		{"namespaceSelector", api.MatchResources{NamespaceSelector: prodOnly, MatchPolicy: &exact}, cms, "prod", "a", true, false},
		{"namespaceSelector, missing namespace", api.MatchResources{NamespaceSelector: prodOnly}, cms, "gone", "a", false, true},
		{"missing namespace, rules do not match", api.MatchResources{NamespaceSelector: prodOnly,
			ResourceRules: []api.NamedRuleWithOperations{rule([]string{"secrets"})}}, cms, "gone", "a", false, false},
	}
	for _, tt := range tests {
		a := &admission.Attributes{Operation: admission.Create, Resource: tt.res, Namespace: tt.ns, Name: tt.objName,
			Object: &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: tt.objName, Namespace: tt.ns}}}
		got, err := MatchResources(t.Context(), nss, &tt.m, a)
		if (err != nil) != tt.wantErr || (got != nil) != tt.want {
			t.Errorf("%s: MatchResources = %+v, %v; want match %v, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}
