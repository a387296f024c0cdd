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

// fakeSource is a Source over fixed lists.
type fakeSource struct {
	mutating   []*api.MutatingWebhookConfiguration
	validating []*api.ValidatingWebhookConfiguration
}

func (s *fakeSource) MutatingWebhookConfigurations() []*api.MutatingWebhookConfiguration {
	return s.mutating
}

func (s *fakeSource) ValidatingWebhookConfigurations() []*api.ValidatingWebhookConfiguration {
	return s.validating
}

// A mutating and a validating configuration of the same name (even at the
// same resourceVersion) each get their own compiled matchConditions, and
// the compiled conditions of deleted or changed configurations are
// forgotten.
func TestMatchConditionsCache(t *testing.T) {
	t.Parallel()
	pods, _ := api.LookupResource("", "pods")
	rules := []api.RuleWithOperations{{Operations: []api.OperationType{"*"},
		Rule: api.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}
	// Neither webhook's condition holds for pod "p": no call is made.
	src := &fakeSource{
		mutating: []*api.MutatingWebhookConfiguration{{ObjectMeta: api.ObjectMeta{Name: "same", ResourceVersion: "7"},
			Webhooks: []api.MutatingWebhook{{Name: "m.example.com", Rules: rules,
				MatchConditions: []api.MatchCondition{{Name: "only-m", Expression: `object.metadata.name == "m"`}}}}}},
		validating: []*api.ValidatingWebhookConfiguration{{ObjectMeta: api.ObjectMeta{Name: "same", ResourceVersion: "7"},
			Webhooks: []api.ValidatingWebhook{{Name: "v.example.com", Rules: rules,
				MatchConditions: []api.MatchCondition{{Name: "only-v", Expression: `object.metadata.name == "v"`}}}}}},
	}
	mut, val := New(Config{Source: src})
	d := mut.d
	attrs := func(name string) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "ns", Name: name,
			Object: &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns"}}}
	}
	mh, vh := mutatingHooks(src.mutating)[0], validatingHooks(src.validating)[0]
	for _, tc := range []struct {
		h    *hook
		pod  string
		want bool
	}{
		{&mh, "m", true}, {&vh, "m", false}, {&vh, "v", true}, {&mh, "v", false}, {&mh, "m", true},
	} {
		got, err := d.match(t.Context(), tc.h, attrs(tc.pod))
		if err != nil || (got != nil) != tc.want {
			t.Errorf("%s webhook on pod %q: match = %v, %v; want a match %v", tc.h.kind(), tc.pod, got, err, tc.want)
		}
	}
	cached := func(kind string) int {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.conditions[kind])
	}
	if m, v := cached(kindMutating), cached(kindValidating); m != 1 || v != 1 {
		t.Fatalf("cached conditions: %d mutating, %d validating; want 1 and 1", m, v)
	}

	// A new resourceVersion of the mutating configuration drops its old
	// compilation; deleting the validating one drops its conditions.
	src.mutating[0] = api.DeepCopy(src.mutating[0])
	src.mutating[0].ResourceVersion = "9"
	src.validating = nil
	if err := mut.Admit(t.Context(), attrs("p")); err != nil {
		t.Fatal(err)
	}
	if err := val.Validate(t.Context(), attrs("p")); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	m := d.conditions[kindMutating]
	if len(m) != 1 || m[mh.id] == nil || m[mh.id].rv != "9" {
		t.Errorf("mutating conditions after an update: %+v; want only %s at 9", m, mh.id)
	}
	d.mu.Unlock()
	if v := cached(kindValidating); v != 0 {
		t.Errorf("validating conditions after the configuration's deletion: %d, want 0", v)
	}
	// And the mutating configuration's deletion.
	src.mutating = nil
	if err := mut.Admit(t.Context(), attrs("p")); err != nil {
		t.Fatal(err)
	}
	if m := cached(kindMutating); m != 0 {
		t.Errorf("mutating conditions after the configuration's deletion: %d, want 0", m)
	}
}
