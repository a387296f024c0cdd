package realcomponents

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// mapPolicy is a MutatingAdmissionPolicy on creates and updates of
// resources (in group, v1) with the given mutations and spec fields.
func mapPolicy(name, group, resource string, mutations string, extra string) string {
	return fmt.Sprintf(`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
  "metadata": {"name": %q},
  "spec": {"reinvocationPolicy": "Never", %s
    "matchConstraints": {"resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [%q], "apiVersions": ["v1"], "resources": [%q]}]},
    "mutations": %s}}`, name, extra, group, resource, mutations)
}

// mapBinding binds policy to the namespaces labelled map=on.
func mapBinding(name, policy string) string {
	return fmt.Sprintf(`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
  "metadata": {"name": %q},
  "spec": {"policyName": %q, "matchResources": {"namespaceSelector": {"matchLabels": {"map": "on"}}}}}`, name, policy)
}

// TestMutatingAdmissionPolicyAsKube writes the same MutatingAdmissionPolicies
// and bindings to kube-apiserver v1.37 (where the API is GA and on) and to
// minik8s, then the objects they mutate, and compares what each server
// stores and answers: an apply configuration on Deployments (the
// conformance specs' annotation and replicas), a JSON patch on
// ConfigMaps, a policy whose matchCondition is false, and one whose
// expression fails at run time (kube's 403 with the CEL error; with
// failurePolicy Ignore the object is stored unmutated).
func TestMutatingAdmissionPolicyAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const ns = "/api/v1/namespaces/map-test"
	both.must(t, 201, "POST", "/api/v1/namespaces", `{"metadata": {"name": "map-test", "labels": {"map": "on"}}}`)
	policies := "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies"
	bindings := "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings"
	create := func(name, policy string) {
		both.must(t, 201, "POST", policies, policy)
		both.must(t, 201, "POST", bindings, mapBinding(name+"-binding", name))
	}
	create("deployments", mapPolicy("deployments", "apps", "deployments", `[
	  {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{metadata: Object.metadata{annotations: {\"mutated-by\": \"admission-policy\"}}}"}},
	  {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {\"odd\": string(object.spec.replicas % 2 == 1)}}}"}},
	  {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{spec: Object.spec{replicas: 1337}}"}}]`, ""))
	create("configmaps", mapPolicy("configmaps", "", "configmaps", `[
	  {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: \"add\", path: \"/data/patched\", value: string(object.data.size())}]"}}]`,
		`"matchConditions": [{"name": "has-data", "expression": "has(object.data)"}],`))
	create("secrets-fail", mapPolicy("secrets-fail", "", "secrets", `[
	  {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {\"n\": string(1 / (size(object.metadata.name) - size(object.metadata.name)))}}}"}}]`, ""))
	create("serviceaccounts-ignore", mapPolicy("serviceaccounts-ignore", "", "serviceaccounts", `[
	  {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: \"replace\", path: \"/spec/nothere/x\", value: \"y\"}]"}}]`,
		`"failurePolicy": "Ignore",`))

	// Expressions that do not compile, or give the wrong type, are refused
	// with the CEL compiler's messages.
	both.sameRefusal(t, "POST", policies, mapPolicy("bad-apply", "", "configmaps", `[
	  {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "object.data"}},
	  {"patchType": "JSONPatch", "jsonPatch": {"expression": "JSONPatch{op: \"add\"}"}},
	  {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: \"add\", path: nosuch}]"}}]`, ""))

	deployment := func(name string) string {
		return fmt.Sprintf(`{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": %q, "labels": {"app": "web"}},
  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}`, name)
	}
	// Each server's policies take effect once its caches (kube: informers
	// and the OpenAPI its type converter reads) have them: wait on a dry
	// run for each.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, e := range both.each() {
		waitFor(ctx, t, e.name+" applies the deployments policy", func() (bool, string) {
			code, out := e.do(t, "POST", "/apis/apps/v1/namespaces/map-test/deployments?dryRun=All", deployment("probe"))
			ann, _ := json.Marshal(out["metadata"])
			return code == 201 && reflect.DeepEqual(out["spec"].(map[string]any)["replicas"], float64(1337)), fmt.Sprintf("%d %s", code, ann)
		})
		waitFor(ctx, t, e.name+" refuses through the failing policy", func() (bool, string) {
			code, out := e.do(t, "POST", ns+"/secrets?dryRun=All", `{"metadata": {"name": "probe"}}`)
			return code == 403, fmt.Sprintf("%d %v", code, out["message"])
		})
		waitFor(ctx, t, e.name+" applies the configmaps policy", func() (bool, string) {
			code, out := e.do(t, "POST", ns+"/configmaps?dryRun=All", `{"metadata": {"name": "probe"}, "data": {"a": "1"}}`)
			data, _ := out["data"].(map[string]any)
			return code == 201 && data["patched"] == "1", fmt.Sprintf("%d %v", code, out["data"])
		})
	}

	// The conformance specs' mutations, read back the same.
	sameMutation(t, both, 201, "POST", "/apis/apps/v1/namespaces/map-test/deployments", deployment("web"),
		"/apis/apps/v1/namespaces/map-test/deployments/web")
	// An update is mutated again: the replicas a client sets are overridden.
	sameMutation(t, both, 200, "PATCH", "/apis/apps/v1/namespaces/map-test/deployments/web", `{"spec": {"replicas": 3}}`,
		"/apis/apps/v1/namespaces/map-test/deployments/web")
	// A JSON patch whose value is computed from the object.
	sameMutation(t, both, 201, "POST", ns+"/configmaps", `{"metadata": {"name": "two"}, "data": {"a": "1", "b": "2"}}`,
		ns+"/configmaps/two")
	// matchConditions false: not mutated.
	sameMutation(t, both, 201, "POST", ns+"/configmaps", `{"metadata": {"name": "empty"}}`, ns+"/configmaps/empty")
	// A run-time error with failurePolicy Fail (the default): kube's 403.
	both.sameRefusal(t, "POST", ns+"/secrets", `{"metadata": {"name": "s"}, "stringData": {"k": "v"}}`)
	// The same with failurePolicy Ignore: stored as sent.
	sameMutation(t, both, 201, "POST", ns+"/serviceaccounts", `{"metadata": {"name": "sa"}}`, ns+"/serviceaccounts/sa")
	// Outside the bound namespaces nothing is mutated.
	both.must(t, 201, "POST", "/api/v1/namespaces", `{"metadata": {"name": "map-off"}}`)
	sameMutation(t, both, 201, "POST", "/api/v1/namespaces/map-off/configmaps", `{"metadata": {"name": "c"}, "data": {"a": "1"}}`)
}

// sameMutation sends one request to both servers and fails unless both
// answer code with the same metadata.labels, metadata.annotations,
// spec and data (and metadata.generation of a kind with a spec), and read
// the same back from each of reads: the parts of an object a mutating
// admission policy changes. (Which kinds have a generation, and an empty
// status, is the business of the tests of each kind.)
func sameMutation(t *testing.T, both apiservers, code int, method, path, body string, reads ...string) {
	t.Helper()
	pick := func(m map[string]any) map[string]any {
		md, _ := m["metadata"].(map[string]any)
		out := map[string]any{"labels": md["labels"], "annotations": md["annotations"], "spec": m["spec"], "data": m["data"]}
		if m["spec"] != nil {
			out["generation"] = md["generation"]
		}
		return out
	}
	var got [2][]map[string]any
	for i, e := range both.each() {
		got[i] = append(got[i], pick(e.must(t, code, method, path, body)))
		for _, r := range reads {
			got[i] = append(got[i], pick(e.must(t, 200, "GET", r, "")))
		}
	}
	for i := range got[0] {
		if !reflect.DeepEqual(got[0][i], got[1][i]) {
			kj, _ := json.Marshal(got[0][i])
			oj, _ := json.Marshal(got[1][i])
			t.Errorf("%s %s (%d):\nkube-apiserver: %s\nminik8s:        %s", method, path, i, kj, oj)
		}
	}
}

// TestMutatingAdmissionPolicyReinvocationAsKube: a policy with
// reinvocationPolicy IfNeeded runs again when the object was mutated after
// it ran, as kube-apiserver v1.37 runs its admission chain a second time
// (any mutation applied asks for it, even the policy's own); one with Never
// does not. Each policy counts its runs in an annotation: kube stores 2 for
// the IfNeeded one and 1 for the other, whatever order the policies run in.
// (apiserver/integration's reinvocation scenario covers the webhooks.)
func TestMutatingAdmissionPolicyReinvocationAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const ns = "/api/v1/namespaces/map-reinvoke"
	both.must(t, 201, "POST", "/api/v1/namespaces", `{"metadata": {"name": "map-reinvoke", "labels": {"map": "on"}}}`)
	counter := func(name, reinvocation string) string {
		count := fmt.Sprintf(`string(has(object.metadata.annotations) && %[1]q in object.metadata.annotations ? int(object.metadata.annotations[%[1]q]) + 1 : 1)`, name)
		return fmt.Sprintf(`{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
  "metadata": {"name": %q},
  "spec": {"reinvocationPolicy": %q,
    "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]},
    "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": %q}}]}}`,
			name, reinvocation, fmt.Sprintf(`Object{metadata: Object.metadata{annotations: {%q: %s}}}`, name, count))
	}
	for _, p := range []struct{ name, reinvocation string }{{"count-never", "Never"}, {"count-ifneeded", "IfNeeded"}} {
		both.must(t, 201, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies", counter(p.name, p.reinvocation))
		both.must(t, 201, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings", mapBinding(p.name+"-binding", p.name))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, e := range both.each() {
		waitFor(ctx, t, e.name+" applies both policies", func() (bool, string) {
			code, out := e.do(t, "POST", ns+"/configmaps?dryRun=All", `{"metadata": {"name": "probe"}}`)
			md, _ := out["metadata"].(map[string]any)
			annotations, _ := md["annotations"].(map[string]any)
			return code == 201 && annotations["count-never"] != nil && annotations["count-ifneeded"] != nil, fmt.Sprintf("%d %v", code, annotations)
		})
	}
	sameMutation(t, both, 201, "POST", ns+"/configmaps", `{"metadata": {"name": "c"}}`, ns+"/configmaps/c")
	got := both.kube.must(t, 200, "GET", ns+"/configmaps/c", "")
	if a := got["metadata"].(map[string]any)["annotations"].(map[string]any); a["count-ifneeded"] != "2" || a["count-never"] != "1" {
		t.Errorf("kube-apiserver's annotations %v: the case expects count-ifneeded 2 (reinvoked), count-never 1", a)
	}
}
