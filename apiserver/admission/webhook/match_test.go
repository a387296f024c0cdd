package webhook

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/admission"
)

// A rule naming events.k8s.io matches a core Event write under matchPolicy
// Equivalent, and the webhook gets the events.k8s.io kind.
func TestMatchEquivalent(t *testing.T) {
	t.Parallel()
	core, _ := api.LookupResource("", "events")
	ev := &api.Event{ObjectMeta: api.ObjectMeta{Name: "e", Namespace: "ns"}, Reason: "Started", Message: "hi"}
	d := &dispatcher{}
	h := &hook{equivalent: true, rules: []api.RuleWithOperations{{Operations: []api.OperationType{"*"},
		Rule: api.Rule{APIGroups: []string{"events.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"events"}}}}}
	a := &admission.Attributes{Operation: admission.Create, Resource: core, Namespace: "ns", Object: ev}
	got, err := d.match(t.Context(), h, a)
	if err != nil || got == nil || got.Resource.Group != "events.k8s.io" {
		t.Errorf("match under Equivalent = %+v, %v", got, err)
	}
	h.equivalent = false
	if got, _ := d.match(t.Context(), h, a); got != nil {
		t.Errorf("match under Exact = %+v, want none", got)
	}
}
