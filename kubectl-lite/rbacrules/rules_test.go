package rbacrules

import (
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestCompacted(t *testing.T) {
	t.Parallel()
	rules := []api.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{"", "apps"}, Resources: []string{"pods"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/livez"}},
	}
	for _, tc := range []struct {
		dedup bool
		want  []string
	}{
		{true, []string{
			"&PolicyRule{Verbs:[get list],APIGroups:[],Resources:[pods],ResourceNames:[],NonResourceURLs:[],}",
			"&PolicyRule{Verbs:[get list],APIGroups:[apps],Resources:[pods],ResourceNames:[],NonResourceURLs:[],}",
			"&PolicyRule{Verbs:[get],APIGroups:[],Resources:[],ResourceNames:[],NonResourceURLs:[/healthz],}",
			"&PolicyRule{Verbs:[get],APIGroups:[],Resources:[],ResourceNames:[],NonResourceURLs:[/livez],}",
			"&PolicyRule{Verbs:[get],APIGroups:[],Resources:[pods],ResourceNames:[a],NonResourceURLs:[],}",
		}},
		{false, []string{
			"&PolicyRule{Verbs:[get list get],APIGroups:[],Resources:[pods],ResourceNames:[],NonResourceURLs:[],}",
			"&PolicyRule{Verbs:[get list],APIGroups:[apps],Resources:[pods],ResourceNames:[],NonResourceURLs:[],}",
			"&PolicyRule{Verbs:[get],APIGroups:[],Resources:[],ResourceNames:[],NonResourceURLs:[/healthz],}",
			"&PolicyRule{Verbs:[get],APIGroups:[],Resources:[],ResourceNames:[],NonResourceURLs:[/livez],}",
			"&PolicyRule{Verbs:[get],APIGroups:[],Resources:[pods],ResourceNames:[a],NonResourceURLs:[],}",
		}},
	} {
		var got []string
		for _, r := range Compacted(rules, tc.dedup) {
			got = append(got, String(r))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("dedup %v:\n got %q\nwant %q", tc.dedup, got, tc.want)
		}
	}
	if rules[0].Verbs[0] != "get" || len(rules[2].Verbs) != 1 {
		t.Errorf("the input rules were changed: %v", rules)
	}
	if got := CombineResourceGroup([]string{"deployments/scale"}, []string{"apps"}); got != "deployments.apps/scale" {
		t.Errorf("CombineResourceGroup = %q", got)
	}
}
