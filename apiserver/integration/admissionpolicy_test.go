package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

const (
	vapPath  = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
	vapbPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
)

// policyOnConfigMaps is a ValidatingAdmissionPolicy on configmap creates and
// updates with the given validations and spec fields.
func policyOnConfigMaps(name string, validations []map[string]any, extra map[string]any) map[string]any {
	spec := map[string]any{
		"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
			"operations": []string{"CREATE", "UPDATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}}},
		"validations": validations,
	}
	for k, v := range extra {
		spec[k] = v
	}
	return map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name}, "spec": spec}
}

// bindingInScenario binds a policy to the namespaces labelled
// scenario=SCENARIO.
func bindingInScenario(name, policy, scenario string, actions []string, extra map[string]any) map[string]any {
	spec := map[string]any{"policyName": policy, "validationActions": actions,
		"matchResources": map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]string{"scenario": scenario}}}}
	for k, v := range extra {
		spec[k] = v
	}
	return map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name}, "spec": spec}
}

// createCached creates an object at path and waits until the watch cache
// of its resource has it.
func createCached(t *testing.T, s *apiservertest.Server, c *tclient, path, resource string, obj map[string]any) {
	t.Helper()
	c.must(201, "POST", path, obj)
	name := obj["metadata"].(map[string]any)["name"].(string)
	st := s.Store("admissionregistration.k8s.io", resource)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := st.Cacher().Get(st.Key("", name)); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s not in the watch cache after 5s", resource, name)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	policy := func(obj map[string]any) { createCached(t, s, c, vapPath, "validatingadmissionpolicies", obj) }
	binding := func(obj map[string]any) { createCached(t, s, c, vapbPath, "validatingadmissionpolicybindings", obj) }
	threeKeys := map[string]string{"a": "1", "b": "2", "c": "3"}

	t.Run("deny with message", func(t *testing.T) {
		scenarioNamespace(c, "vap-deny")
		policy(policyOnConfigMaps("max-keys", []map[string]any{{"expression": "!has(object.data) || object.data.size() <= 2", "message": "too many keys"}}, nil))
		binding(bindingInScenario("max-keys-binding", "max-keys", "vap-deny", []string{"Deny"}, nil))
		r := c.do("POST", "/api/v1/namespaces/vap-deny/configmaps", configMap("big", nil, threeKeys), "")
		st := r.obj(t)
		want := `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: too many keys`
		if r.Code != 422 || st["reason"] != "Invalid" || st["message"] != want {
			t.Errorf("create = %d %s\nwant 422 Invalid %q", r.Code, r.Body, want)
		}
		c.must(201, "POST", "/api/v1/namespaces/vap-deny/configmaps", configMap("small", nil, map[string]string{"a": "1"}))
		// The binding selects only its namespace.
		c.must(201, "POST", "/api/v1/namespaces/default/configmaps", configMap("big", nil, threeKeys))
	})

	t.Run("messageExpression and reason", func(t *testing.T) {
		scenarioNamespace(c, "vap-msg")
		policy(policyOnConfigMaps("named", []map[string]any{{"expression": "object.metadata.name.startsWith('ok-')",
			"messageExpression": "'name ' + object.metadata.name + ' lacks the ok- prefix'", "reason": "Forbidden"}}, nil))
		binding(bindingInScenario("named-binding", "named", "vap-msg", []string{"Deny"}, nil))
		r := c.do("POST", "/api/v1/namespaces/vap-msg/configmaps", configMap("bad", nil, nil), "")
		if r.Code != 403 || !strings.Contains(string(r.Body), "denied request: name bad lacks the ok- prefix") {
			t.Errorf("create = %d %s", r.Code, r.Body)
		}
		c.must(201, "POST", "/api/v1/namespaces/vap-msg/configmaps", configMap("ok-1", nil, nil))
	})

	t.Run("numbers", func(t *testing.T) {
		// Whole numbers are CEL ints, as in kube (the conformance spec
		// "should allow expressions to refer variables").
		scenarioNamespace(c, "vap-numbers")
		p := policyOnConfigMaps("odd-replicas", []map[string]any{{"expression": "variables.oddReplicas"}},
			map[string]any{"variables": []map[string]any{{"name": "replicas", "expression": "object.spec.replicas"},
				{"name": "oddReplicas", "expression": "variables.replicas % 2 == 1"}}})
		p["spec"].(map[string]any)["matchConstraints"] = map[string]any{"resourceRules": []any{map[string]any{
			"operations": []string{"CREATE"}, "apiGroups": []string{"apps"}, "apiVersions": []string{"v1"}, "resources": []string{"deployments"}}}}
		policy(p)
		binding(bindingInScenario("odd-replicas-binding", "odd-replicas", "vap-numbers", []string{"Deny"}, nil))
		deployment := func(name string, replicas int) map[string]any {
			return map[string]any{"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": replicas,
				"selector": map[string]any{"matchLabels": map[string]string{"app": "x"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]string{"app": "x"}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}}
		}
		c.must(201, "POST", "/apis/apps/v1/namespaces/vap-numbers/deployments", deployment("odd", 3))
		r := c.do("POST", "/apis/apps/v1/namespaces/vap-numbers/deployments", deployment("even", 2), "")
		if r.Code != 422 || !strings.Contains(string(r.Body), "failed expression: variables.oddReplicas") {
			t.Errorf("create with even replicas = %d %s", r.Code, r.Body)
		}
	})

	t.Run("params", func(t *testing.T) {
		scenarioNamespace(c, "vap-params")
		c.must(201, "POST", "/api/v1/namespaces/vap-params/configmaps", configMap("limits", nil, map[string]string{"max": "1"}))
		policy(policyOnConfigMaps("param-keys", []map[string]any{{"expression": "object.metadata.name == 'limits' || !has(object.data) || object.data.size() <= int(params.data.max)"}},
			map[string]any{"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}))
		binding(bindingInScenario("param-keys-binding", "param-keys", "vap-params", []string{"Deny"},
			map[string]any{"paramRef": map[string]any{"name": "limits", "parameterNotFoundAction": "Deny"}}))
		r := c.do("POST", "/api/v1/namespaces/vap-params/configmaps", configMap("two", nil, map[string]string{"a": "1", "b": "2"}), "")
		if r.Code != 422 || !strings.Contains(string(r.Body), `failed expression: object.metadata.name == 'limits'`) {
			t.Errorf("create over the param's limit = %d %s", r.Code, r.Body)
		}
		c.must(201, "POST", "/api/v1/namespaces/vap-params/configmaps", configMap("one", nil, map[string]string{"a": "1"}))
		// Params missing in another namespace the binding selects: Deny.
		c.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "vap-params-2",
			"labels": map[string]string{"scenario": "vap-params"}}})
		r = c.do("POST", "/api/v1/namespaces/vap-params-2/configmaps", configMap("x", nil, nil), "")
		if r.Code != 422 || !strings.Contains(string(r.Body), "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction") {
			t.Errorf("create without params = %d %s", r.Code, r.Body)
		}
	})

	t.Run("warn", func(t *testing.T) {
		scenarioNamespace(c, "vap-warn")
		policy(policyOnConfigMaps("warned", []map[string]any{{"expression": "false", "message": "just so you know"}}, nil))
		binding(bindingInScenario("warned-binding", "warned", "vap-warn", []string{"Warn", "Audit"}, nil))
		body, _ := json.Marshal(configMap("w", nil, nil))
		resp, err := http.Post(s.URL()+"/api/v1/namespaces/vap-warn/configmaps", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := `299 - "Validation failed for ValidatingAdmissionPolicy 'warned' with binding 'warned-binding': just so you know"`
		if got := resp.Header.Values("Warning"); resp.StatusCode != 201 || len(got) != 1 || got[0] != want {
			t.Errorf("status %d, Warning headers %q, want %q", resp.StatusCode, got, want)
		}
	})

	t.Run("authorizer", func(t *testing.T) {
		scenarioNamespace(c, "vap-authz")
		// The test's user (the local administrator) may delete secrets.
		policy(policyOnConfigMaps("authz", []map[string]any{{
			"expression": "!authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('delete').allowed()",
			"message":    "who may delete secrets may not create configmaps here"}}, nil))
		binding(bindingInScenario("authz", "authz", "vap-authz", []string{"Deny"}, nil))
		r := c.do("POST", "/api/v1/namespaces/vap-authz/configmaps", configMap("x", nil, nil), "")
		if r.Code != 422 || !strings.Contains(string(r.Body), "denied request: who may delete secrets may not create configmaps here") {
			t.Errorf("create = %d %s", r.Code, r.Body)
		}
	})

	for _, fp := range []string{"Fail", "Ignore"} {
		t.Run("runtime error, failurePolicy "+fp, func(t *testing.T) {
			name := "vap-error-" + strings.ToLower(fp)
			scenarioNamespace(c, name)
			policy(policyOnConfigMaps(name, []map[string]any{{"expression": "object.data.missing == 'x'"}}, map[string]any{"failurePolicy": fp}))
			binding(bindingInScenario(name, name, name, []string{"Deny"}, nil))
			r := c.do("POST", "/api/v1/namespaces/"+name+"/configmaps", configMap("x", nil, map[string]string{"a": "1"}), "")
			switch fp {
			case "Fail":
				if r.Code != 422 || !strings.Contains(string(r.Body), "expression 'object.data.missing == 'x'' resulted in error: no such key: missing") {
					t.Errorf("create = %d %s", r.Code, r.Body)
				}
			default:
				if r.Code != 201 {
					t.Errorf("create = %d %s, want 201", r.Code, r.Body)
				}
			}
		})
	}

	t.Run("policy defaults and validation", func(t *testing.T) {
		got := c.must(200, "GET", vapPath+"/max-keys", nil)
		spec := got["spec"].(map[string]any)
		mc := spec["matchConstraints"].(map[string]any)
		if spec["failurePolicy"] != "Fail" || mc["matchPolicy"] != "Equivalent" || mc["namespaceSelector"] == nil {
			t.Errorf("defaults = %v", spec)
		}
		r := c.do("POST", vapPath, policyOnConfigMaps("bad-cel", []map[string]any{
			{"expression": "object.metadata.name.startsWith(", "messageExpression": "1 + 1"}, {"expression": "params.x == 1"}}, nil), "")
		for _, want := range []string{
			`spec.validations[0].expression: Invalid value: \"object.metadata.name.startsWith(\": compilation failed: ERROR: \u003cinput\u003e:1:33: Syntax error`,
			`spec.validations[0].messageExpression: Invalid value: \"1 + 1\": must evaluate to string`,
			`spec.validations[1].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: \u003cinput\u003e:1:1: undeclared reference to 'params'`,
		} {
			if r.Code != 422 || !strings.Contains(string(r.Body), want) {
				t.Errorf("policy with bad CEL = %d %s\nlacks %s", r.Code, r.Body, want)
			}
		}
		r = c.do("POST", vapbPath, bindingInScenario("bad", "max-keys", "x", []string{"Deny", "Warn"}, nil), "")
		if r.Code != 422 || !strings.Contains(string(r.Body), "must not contain both Deny and Warn") {
			t.Errorf("invalid binding = %d %s", r.Code, r.Body)
		}
	})
}

// Policies apply to custom resources and take custom resources as params;
// mutating webhooks patch custom resources.
func TestValidatingAdmissionPolicyCustomResources(t *testing.T) {
	s := apiservertest.Start(t)
	c := newClient(t, s)
	createCRD(t, c, widgetCRD, "/apis/example.com/v1/widgets")
	scenarioNamespace(c, "vap-crd")
	c.must(201, "POST", "/apis/example.com/v1/namespaces/vap-crd/widgets", widget("palette", map[string]any{"size": "1m", "color": "blue"}))
	policy := func(obj map[string]any) { createCached(t, s, c, vapPath, "validatingadmissionpolicies", obj) }
	binding := func(obj map[string]any) { createCached(t, s, c, vapbPath, "validatingadmissionpolicybindings", obj) }

	policy(policyOnConfigMaps("color", []map[string]any{{"expression": "!has(object.data) || !('color' in object.data) || object.data.color == params.spec.color",
		"messageExpression": "'the color is ' + params.spec.color"}},
		map[string]any{"paramKind": map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}}))
	binding(bindingInScenario("color", "color", "vap-crd", []string{"Deny"},
		map[string]any{"paramRef": map[string]any{"name": "palette", "parameterNotFoundAction": "Deny"}}))
	r := c.do("POST", "/api/v1/namespaces/vap-crd/configmaps", configMap("red", nil, map[string]string{"color": "red"}), "")
	if r.Code != 422 || !strings.Contains(string(r.Body), "denied request: the color is blue") {
		t.Errorf("create against a Widget param = %d %s", r.Code, r.Body)
	}
	c.must(201, "POST", "/api/v1/namespaces/vap-crd/configmaps", configMap("blue", nil, map[string]string{"color": "blue"}))

	p := policyOnConfigMaps("no-13m", []map[string]any{{"expression": "object.spec.size != '13m'", "message": "13m is unlucky"}}, nil)
	p["spec"].(map[string]any)["matchConstraints"] = map[string]any{"resourceRules": []any{map[string]any{
		"operations": []string{"CREATE"}, "apiGroups": []string{"example.com"}, "apiVersions": []string{"*"}, "resources": []string{"widgets"}}}}
	policy(p)
	binding(bindingInScenario("no-13m", "no-13m", "vap-crd", []string{"Deny"}, nil))
	r = c.do("POST", "/apis/example.com/v1/namespaces/vap-crd/widgets", widget("w13", map[string]any{"size": "13m"}), "")
	if r.Code != 422 || !strings.Contains(string(r.Body), `widgets.example.com \"w13\" is forbidden: ValidatingAdmissionPolicy 'no-13m' with binding 'no-13m' denied request: 13m is unlucky`) {
		t.Errorf("create a custom resource the policy refuses = %d %s", r.Code, r.Body)
	}
	c.must(201, "POST", "/apis/example.com/v1/namespaces/vap-crd/widgets", widget("w12", map[string]any{"size": "12m"}))

	// A mutating webhook patches custom resources too.
	hook := startTestWebhook(t, "")
	m := webhookConfig("MutatingWebhookConfiguration", "widgets", hook.srv.URL+"/mutate", hook.ca.pem, "vap-crd", nil)
	m["webhooks"].([]any)[0].(map[string]any)["rules"] = []any{map[string]any{"operations": []string{"CREATE"},
		"apiGroups": []string{"example.com"}, "apiVersions": []string{"v1"}, "resources": []string{"widgets"}}}
	createWebhookConfig(t, s, c, m)
	got := c.must(201, "POST", "/apis/example.com/v1/namespaces/vap-crd/widgets", widget("patched", map[string]any{"size": "2m"}))
	if l := meta(got)["labels"].(map[string]any); l["mutated"] != "1" || l["app"] != "patched" {
		t.Errorf("labels of a widget a webhook patched: %v", l)
	}
	if spec := got["spec"].(map[string]any); spec["color"] != "red" {
		t.Errorf("the patched widget lost its defaults: %v", spec)
	}
}
