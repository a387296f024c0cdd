package validation

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
)

func ptrTo[T any](v T) *T { return &v }

func validWebhookConfig() *api.ValidatingWebhookConfiguration {
	return &api.ValidatingWebhookConfiguration{
		ObjectMeta: api.ObjectMeta{Name: "deny"},
		Webhooks: []api.ValidatingWebhook{{
			Name:                    "deny.example.com",
			ClientConfig:            api.WebhookClientConfig{URL: ptrTo("https://127.0.0.1:8443/validate")},
			Rules:                   []api.RuleWithOperations{{Operations: []api.OperationType{"CREATE"}, Rule: api.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "pods/status"}}}},
			SideEffects:             ptrTo(api.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// Each case breaks one rule and must get kube's field path and message.
func TestValidateWebhookConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(w *api.ValidatingWebhook)
		want   string // "" = valid
	}{
		{"valid", func(*api.ValidatingWebhook) {}, ""},
		{"no sideEffects", func(w *api.ValidatingWebhook) { w.SideEffects = nil },
			"webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"},
		{"sideEffects Some", func(w *api.ValidatingWebhook) { w.SideEffects = ptrTo(api.SideEffectClassSome) },
			`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`},
		{"no review versions", func(w *api.ValidatingWebhook) { w.AdmissionReviewVersions = nil },
			"webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1"},
		{"unknown review version", func(w *api.ValidatingWebhook) { w.AdmissionReviewVersions = []string{"v2"} },
			`webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1`},
		{"http url", func(w *api.ValidatingWebhook) { w.ClientConfig.URL = ptrTo("http://x/y") },
			`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`},
		{"url and service", func(w *api.ValidatingWebhook) {
			w.ClientConfig.Service = &api.ServiceReference{Namespace: "a", Name: "b"}
		}, "webhooks[0].clientConfig: Required value: exactly one of url or service is required"},
		{"timeout", func(w *api.ValidatingWebhook) { w.TimeoutSeconds = ptrTo(int32(31)) },
			"webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"},
		{"name not qualified", func(w *api.ValidatingWebhook) { w.Name = "deny" },
			`webhooks[0].name: Invalid value: "deny": should be a domain with at least three segments separated by dots`},
		{"wildcard with others", func(w *api.ValidatingWebhook) { w.Rules[0].Resources = []string{"*", "pods"} },
			"if '*' is present, must not specify other resources without subresources"},
		{"bad operation", func(w *api.ValidatingWebhook) { w.Rules[0].Operations = []api.OperationType{"PATCH"} },
			`webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validWebhookConfig()
			tt.change(&c.Webhooks[0])
			defaults.Default(c)
			errs := Validate(c)
			if tt.want == "" {
				if len(errs) > 0 {
					t.Fatalf("errors: %v", errs.ToAggregate())
				}
				return
			}
			if !strings.Contains(errs.ToAggregate(), tt.want) {
				t.Errorf("errors %q\nwant one with %q", errs.ToAggregate(), tt.want)
			}
		})
	}
}

func TestWebhookDefaults(t *testing.T) {
	t.Parallel()
	c := &api.MutatingWebhookConfiguration{Webhooks: []api.MutatingWebhook{{
		ClientConfig: api.WebhookClientConfig{Service: &api.ServiceReference{Namespace: "ns", Name: "svc"}},
		Rules:        []api.RuleWithOperations{{}},
	}}}
	defaults.Default(c)
	w := c.Webhooks[0]
	if *w.FailurePolicy != api.FailurePolicyFail || *w.MatchPolicy != api.MatchPolicyEquivalent || *w.TimeoutSeconds != 10 ||
		w.NamespaceSelector == nil || w.ObjectSelector == nil || *w.ReinvocationPolicy != api.ReinvocationNever ||
		*w.ClientConfig.Service.Port != 443 || *w.Rules[0].Scope != api.AllScopes {
		t.Errorf("defaults not kube's: %+v", w)
	}
}

func TestValidatePolicyAndBinding(t *testing.T) {
	t.Parallel()
	p := &api.ValidatingAdmissionPolicy{ObjectMeta: api.ObjectMeta{Name: "p"}}
	defaults.Default(p)
	got := Validate(p).ToAggregate()
	for _, want := range []string{"spec.matchConstraints: Required value",
		"spec.validations: Required value: validations or auditAnnotations must contain at least one item"} {
		if !strings.Contains(got, want) {
			t.Errorf("policy errors %q lack %q", got, want)
		}
	}
	b := &api.ValidatingAdmissionPolicyBinding{ObjectMeta: api.ObjectMeta{Name: "b"},
		Spec: api.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
			ValidationActions: []api.ValidationAction{"Deny", "Warn"}}}
	defaults.Default(b)
	got = Validate(b).ToAggregate()
	if want := "must not contain both Deny and Warn"; !strings.Contains(got, want) {
		t.Errorf("binding errors %q lack %q", got, want)
	}
	b.Spec.ValidationActions = []api.ValidationAction{"Deny"}
	if errs := Validate(b); len(errs) > 0 {
		t.Errorf("valid binding refused: %v", errs.ToAggregate())
	}
}
