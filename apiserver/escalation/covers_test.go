package escalation

import (
	"slices"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestCovers(t *testing.T) {
	t.Parallel()
	rule := func(groups, resources, verbs []string, names ...string) api.PolicyRule {
		return api.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs, ResourceNames: names}
	}
	s := func(v ...string) []string { return v }
	cases := []struct {
		name           string
		owner, servant []api.PolicyRule
		missing        []string
	}{
		{"same rule", []api.PolicyRule{rule(s(""), s("pods"), s("get"))}, []api.PolicyRule{rule(s(""), s("pods"), s("get"))}, nil},
		{"wildcards cover names", []api.PolicyRule{rule(s("*"), s("*"), s("*"))}, []api.PolicyRule{rule(s("apps"), s("deployments"), s("get", "list"))}, nil},
		{"a name does not cover a wildcard", []api.PolicyRule{rule(s(""), s("pods"), s("get", "list"))}, []api.PolicyRule{rule(s(""), s("pods"), s("*"))},
			s(`{APIGroups:[""], Resources:["pods"], Verbs:["*"]}`)},
		{"split across owner rules", []api.PolicyRule{rule(s(""), s("pods"), s("get")), rule(s(""), s("pods"), s("list"))}, []api.PolicyRule{rule(s(""), s("pods"), s("get", "list"))}, nil},
		{"subresource wildcard", []api.PolicyRule{rule(s("apps"), s("*/scale"), s("update"))}, []api.PolicyRule{rule(s("apps"), s("deployments/scale"), s("update"))}, nil},
		{"resource names narrow the owner", []api.PolicyRule{rule(s(""), s("secrets"), s("get"), "a")}, []api.PolicyRule{rule(s(""), s("secrets"), s("get"), "a", "b")},
			s(`{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}`)},
		{"unnamed is not covered by named", []api.PolicyRule{rule(s(""), s("secrets"), s("get"), "a")}, []api.PolicyRule{rule(s(""), s("secrets"), s("get"))},
			s(`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`)},
		{"url prefix", []api.PolicyRule{{Verbs: s("get"), NonResourceURLs: s("/api/*")}}, []api.PolicyRule{{Verbs: s("get"), NonResourceURLs: s("/api/v1", "/healthz")}},
			s(`{NonResourceURLs:["/healthz"], Verbs:["get"]}`)},
		{"missing verbs compacted", nil, []api.PolicyRule{rule(s(""), s("pods", "secrets"), s("get", "list"))},
			s(`{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`, `{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, missing := Covers(c.owner, c.servant)
			var got []string
			for _, r := range Compact(missing) {
				got = append(got, CompactString(r))
			}
			slices.Sort(got)
			if ok != (len(c.missing) == 0) || !slices.Equal(got, c.missing) {
				t.Errorf("Covers = %v, missing %q; want missing %q", ok, got, c.missing)
			}
		})
	}
}
