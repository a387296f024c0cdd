package realcomponents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kprotobuf "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// fvRequest sends body as is (no conversion) with the Content-Type
// ctype and returns the answer's code, its Warning headers' texts and
// its decoded body.
func fvRequest(t *testing.T, e *endpoint, method, path, ctype, body string) (int, []string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", e.name, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		out = map[string]any{"text": string(data)}
	}
	var warnings []string
	for _, w := range resp.Header.Values("Warning") {
		// 299 - "text": the text, unquoted.
		if rest, ok := strings.CutPrefix(w, `299 - `); ok {
			var s string
			if err := json.Unmarshal([]byte(rest), &s); err == nil {
				w = s
			}
		}
		warnings = append(warnings, w)
	}
	return resp.StatusCode, warnings, out
}

// patchedValue is the value kube-apiserver quotes when a JSON or merge
// patch gives an object with unknown fields: the whole patched object,
// with the uid, timestamps and resourceVersion of its server; the
// comparison replaces it.
var patchedValue = regexp.MustCompile(`Invalid value: "\{.*\}": strict decoding error`)

// fvNormalize replaces, in a Status, what each server writes its own way.
func fvNormalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = fvNormalize(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = fvNormalize(e)
		}
		return t
	case string:
		// Server-side apply lists a configuration's unknown fields in Go
		// map order.
		if head, list, ok := strings.Cut(t, "errors:\n  "); ok {
			lines := strings.Split(list, "\n  ")
			slices.Sort(lines)
			t = head + "errors:\n  " + strings.Join(lines, "\n  ")
		}
		return patchedValue.ReplaceAllString(t, `Invalid value: "PATCHED": strict decoding error`)
	}
	return v
}

// fvCase is one write sent to both servers.
type fvCase struct {
	name                      string
	method, path, ctype, body string
	// want is the code kube-apiserver answers, so the case shows what it
	// means to show; contains, if set, must be in both answers' bodies.
	want     int
	contains string
}

func (c fvCase) run(t *testing.T, both apiservers) {
	t.Helper()
	kc, kw, kb := fvRequest(t, both.kube, c.method, c.path, c.ctype, c.body)
	oc, ow, ob := fvRequest(t, both.ours, c.method, c.path, c.ctype, c.body)
	kj, _ := json.Marshal(kb)
	t.Logf("kube-apiserver %d %q: %s", kc, kw, kj)
	if kc != c.want {
		t.Errorf("kube-apiserver answered %d, the case expects %d", kc, c.want)
	}
	if oc != kc {
		oj, _ := json.Marshal(ob)
		t.Errorf("code: kube-apiserver %d, minik8s %d: %s", kc, oc, oj)
	}
	if !slices.Equal(kw, ow) {
		t.Errorf("warnings:\nkube-apiserver %q\nminik8s        %q", kw, ow)
	}
	if kc >= 400 {
		kn, on := fvNormalize(kb), fvNormalize(ob)
		if !reflect.DeepEqual(kn, on) {
			kj, _ := json.MarshalIndent(kn, "", "  ")
			oj, _ := json.MarshalIndent(on, "", "  ")
			t.Errorf("answer:\nkube-apiserver:\n%s\nminik8s:\n%s", kj, oj)
		}
	}
	if c.contains != "" {
		for i, b := range []map[string]any{kb, ob} {
			if s := fmt.Sprint(b); !strings.Contains(s, c.contains) {
				t.Errorf("%s's answer lacks %q: %s", both.each()[i].name, c.contains, s)
			}
		}
	}
}

const fvDeployments = "/apis/apps/v1/namespaces/default/deployments"

// fvDeployment is a Deployment named name whose spec starts with extra
// (JSON members, each followed by a comma), as the conformance spec
// writes it.
func fvDeployment(name, meta, extra string) string {
	return `{"apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "` + name + `", ` + meta + `"labels": {"app": "nginx"}},
  "spec": {` + extra + `
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {"metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}}`
}

const fvDeploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  labels: {app: nginx}
spec:
  replicas: 2
  replicas: 3
  bogus: 1
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        bogusToo: x
`

// TestFieldValidationTypedAsKube: unknown and duplicate fields of a
// built-in kind, in JSON and YAML bodies, on create, update and every
// patch type, with fieldValidation Strict, Warn, Ignore, absent and
// invalid, answered as kube-apiserver v1.37 answers: the code, the Status
// and the Warning headers.
func TestFieldValidationTypedAsKube(t *testing.T) {
	both := startBoth(t)
	const js, yml = "application/json", "application/yaml"
	unknownDup := `"unknownField": "foo", "replicas": 2, "replicas": 3,`
	cases := []fvCase{
		{name: "create strict unknown and duplicate", method: "POST", path: fvDeployments + "?fieldValidation=Strict&fieldManager=field_validation_mgr", ctype: js,
			body: fvDeployment("my-dep", "", unknownDup), want: 400,
			contains: `strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas"`},
		{name: "create strict without a content type", method: "POST", path: fvDeployments + "?fieldValidation=Strict&fieldManager=field_validation_mgr", ctype: "",
			body: fvDeployment("my-dep", "", unknownDup), want: 400,
			contains: `strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas"`},
		{name: "create strict unknown metadata", method: "POST", path: fvDeployments + "?fieldValidation=Strict", ctype: js,
			body: fvDeployment("my-dep", `"unknownMeta": "foo", `, ""), want: 400,
			contains: `strict decoding error: unknown field "metadata.unknownMeta"`},
		{name: "create strict case differs", method: "POST", path: fvDeployments + "?fieldValidation=Strict", ctype: js,
			body: fvDeployment("my-dep", "", `"Replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always", "imagePullPolicy": "Never", "nope": 1}]}},`), want: 400},
		{name: "create invalid directive", method: "POST", path: fvDeployments + "?fieldValidation=Bogus", ctype: js,
			body: fvDeployment("bad-directive", "", ""), want: 422},
		{name: "create lower case directive", method: "POST", path: fvDeployments + "?fieldValidation=strict", ctype: js,
			body: fvDeployment("bad-directive", "", ""), want: 422},
		{name: "create warn", method: "POST", path: fvDeployments + "?fieldValidation=Warn", ctype: js,
			body: fvDeployment("warned", `"unknownMeta": "foo", `, unknownDup), want: 201},
		{name: "create default warns", method: "POST", path: fvDeployments, ctype: js,
			body: fvDeployment("defaulted", "", unknownDup), want: 201},
		{name: "create ignore", method: "POST", path: fvDeployments + "?fieldValidation=Ignore", ctype: js,
			body: fvDeployment("ignored", `"unknownMeta": "foo", `, unknownDup), want: 201},
		{name: "create strict yaml", method: "POST", path: fvDeployments + "?fieldValidation=Strict", ctype: yml,
			body: fmt.Sprintf(fvDeploymentYAML, "yaml-strict"), want: 400},
		{name: "create warn yaml", method: "POST", path: fvDeployments + "?fieldValidation=Warn", ctype: yml,
			body: fmt.Sprintf(fvDeploymentYAML, "yaml-warn"), want: 201},
		{name: "update strict", method: "PUT", path: fvDeployments + "/warned?fieldValidation=Strict", ctype: js,
			body: fvDeployment("warned", "", unknownDup), want: 400},
		{name: "update warn yaml", method: "PUT", path: fvDeployments + "/yaml-warn?fieldValidation=Warn", ctype: yml,
			body: fmt.Sprintf(fvDeploymentYAML, "yaml-warn"), want: 200},
		{name: "update invalid directive", method: "PUT", path: fvDeployments + "/warned?fieldValidation=Nope", ctype: js,
			body: fvDeployment("warned", "", ""), want: 422},
		{name: "merge patch strict", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=Strict", ctype: "application/merge-patch+json",
			body: `{"spec": {"paused": true, "paused": false, "unknownField": 1}, "metadata": {"unknownMeta": 2}}`, want: 422},
		{name: "merge patch warn", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=Warn", ctype: "application/merge-patch+json",
			body: `{"spec": {"paused": true, "paused": false, "unknownField": 1}}`, want: 200},
		{name: "merge patch default", method: "PATCH", path: fvDeployments + "/warned", ctype: "application/merge-patch+json",
			body: `{"spec": {"unknownField": 1}}`, want: 200},
		{name: "merge patch ignore", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=Ignore", ctype: "application/merge-patch+json",
			body: `{"spec": {"paused": true, "paused": false, "unknownField": 1}}`, want: 200},
		{name: "strategic patch strict", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=Strict", ctype: "application/strategic-merge-patch+json",
			body: `{"spec": {"paused": true, "paused": false, "unknownField": 1}}`, want: 422},
		{name: "strategic patch warn", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=Warn", ctype: "application/strategic-merge-patch+json",
			body: `{"spec": {"paused": true, "paused": false, "unknownField": 1}}`, want: 200},
		{name: "json patch strict", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=Strict", ctype: "application/json-patch+json",
			body: `[{"op": "add", "path": "/spec/unknownField", "value": 1, "extra": 2}]`, want: 422},
		{name: "json patch warn", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=Warn", ctype: "application/json-patch+json",
			body: `[{"op": "add", "path": "/spec/unknownField", "value": 1, "op": "add"}]`, want: 200},
		{name: "json patch invalid directive", method: "PATCH", path: fvDeployments + "/warned?fieldValidation=x", ctype: "application/json-patch+json",
			body: `[]`, want: 422},
		{name: "scale strict", method: "PUT", path: fvDeployments + "/warned/scale?fieldValidation=Strict", ctype: js,
			body: `{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "warned", "namespace": "default"}, "spec": {"replicas": 2, "bogus": 1}}`, want: 400},
		{name: "scale warn", method: "PUT", path: fvDeployments + "/warned/scale?fieldValidation=Warn", ctype: js,
			body: `{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "warned", "namespace": "default"}, "spec": {"replicas": 2, "replicas": 1}, "status": {"nope": 1}}`, want: 200},
		{name: "status strict", method: "PUT", path: fvDeployments + "/warned/status?fieldValidation=Strict", ctype: js,
			body: fvDeployment("warned", "", `"status": {"replicas": 1, "bogus": 2},`), want: 400},
		{name: "protobuf strict", method: "POST", path: fvDeployments + "?fieldValidation=Strict", ctype: "application/vnd.kubernetes.protobuf",
			body: fvProtobufDeployment(t, "proto"), want: 201},
		{name: "apply strict duplicate", method: "PATCH", path: fvDeployments + "/applied?fieldValidation=Strict&fieldManager=m", ctype: "application/apply-patch+yaml",
			body: strings.ReplaceAll(strings.ReplaceAll(fmt.Sprintf(fvDeploymentYAML, "applied"), "  bogus: 1\n", ""), "        bogusToo: x\n", ""), want: 400},
		{name: "apply warn duplicate", method: "PATCH", path: fvDeployments + "/applied?fieldValidation=Warn&fieldManager=m", ctype: "application/apply-patch+yaml",
			body: strings.ReplaceAll(strings.ReplaceAll(fmt.Sprintf(fvDeploymentYAML, "applied"), "  bogus: 1\n", ""), "        bogusToo: x\n", ""), want: 201},
		{name: "apply ignore unknown", method: "PATCH", path: fvDeployments + "/applied?fieldValidation=Ignore&fieldManager=m", ctype: "application/apply-patch+yaml",
			body: strings.ReplaceAll(fmt.Sprintf(fvDeploymentYAML, "applied"), "        bogusToo: x\n", ""), want: 500},
		{name: "apply strict unknown", method: "PATCH", path: fvDeployments + "/applied?fieldValidation=Strict&fieldManager=m", ctype: "application/apply-patch+yaml",
			body: strings.ReplaceAll(fmt.Sprintf(fvDeploymentYAML, "applied"), "        bogusToo: x\n", ""), want: 500},
		{name: "apply invalid directive", method: "PATCH", path: fvDeployments + "/applied?fieldValidation=Bogus&fieldManager=m", ctype: "application/apply-patch+yaml",
			body: "{}", want: 422},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, both) })
	}
}

// fvCRD is a cluster-scoped CRD of group fv.example.com named after
// plural, with schema (indented under openAPIV3Schema).
func fvCRD(plural, schema string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]s.fv.example.com}
spec:
  group: fv.example.com
  scope: Cluster
  names: {plural: %[1]s, kind: K%[1]s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
%[2]s`, plural, schema)
}

// fvSpecSchema is the conformance spec's schema of spec's fields,
// indented for fvCRD; preserve adds x-kubernetes-preserve-unknown-fields
// to spec, embedded a template that is an embedded resource.
func fvSpecSchema(preserve, embedded bool) string {
	s := `        type: object
        properties:
          spec:
            type: object
`
	if preserve {
		s += "            x-kubernetes-preserve-unknown-fields: true\n"
	}
	s += `            properties:
              foo: {type: string}
              cronSpec: {type: string, pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'}
              ports:
                type: array
                x-kubernetes-list-map-keys: [containerPort, protocol]
                x-kubernetes-list-type: map
                items:
                  type: object
                  required: [containerPort, protocol]
                  properties:
                    containerPort: {type: integer, format: int32}
                    hostIP: {type: string}
                    hostPort: {type: integer, format: int32}
                    name: {type: string}
                    protocol: {type: string}
`
	if embedded {
		s += `              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  metadata:
                    type: object
                    properties:
                      name: {type: string}
                  spec: {type: object}
`
	}
	return s
}

// TestFieldValidationCustomAsKube: unknown, duplicate and unknown
// metadata fields of custom resources — with a schema, with spec or the
// whole object preserving unknown fields, with an embedded resource — on
// apply (the conformance specs' requests), create, update and patches,
// answered as kube-apiserver v1.37 answers.
func TestFieldValidationCustomAsKube(t *testing.T) {
	both := startBoth(t)
	crds := map[string]string{
		"schemas":   fvSpecSchema(false, false),
		"preserves": fvSpecSchema(true, false),
		"embeddeds": fvSpecSchema(true, true),
		"opens":     "        type: object\n        x-kubernetes-preserve-unknown-fields: true\n",
	}
	for plural, schema := range crds {
		both.must(t, http.StatusCreated, "POST", crdsPath, fvCRD(plural, schema))
	}
	for plural := range crds {
		for _, e := range both.each() {
			waitServed(t, e, "/apis/fv.example.com/v1/"+plural)
		}
	}
	const apply, js, yml, merge = "application/apply-patch+yaml", "application/json", "application/yaml", "application/merge-patch+json"
	path := func(plural, name, query string) string {
		p := "/apis/fv.example.com/v1/" + plural
		if name != "" {
			p += "/" + name
		}
		return p + "?" + query
	}
	strict := "fieldManager=field_validation_mgr&fieldValidation=Strict"
	doc := func(plural, name, rest string) string {
		return fmt.Sprintf("\napiVersion: fv.example.com/v1\nkind: K%s\nmetadata:\n  name: %s\n%s", plural, name, rest)
	}
	ports := "  cronSpec: \"* * * * */5\"\n  ports:\n  - name: x\n    containerPort: 80\n    protocol: TCP"
	cases := []fvCase{
		{name: "apply valid", method: "PATCH", path: path("schemas", "mytest", strict), ctype: apply,
			body: doc("schemas", "mytest", "spec:\n  foo: foo1\n"+ports), want: 201},
		{name: "apply unknown without schema", method: "PATCH", path: path("opens", "mytest", strict), ctype: apply,
			body: doc("opens", "mytest", "spec:\n  unknown: uk1\n"+ports), want: 201},
		{name: "apply extra property", method: "PATCH", path: path("schemas", "extra", strict), ctype: apply,
			body: doc("schemas", "extra", "unknownField: unknown\nspec:\n  foo: foo1\n"+ports), want: 500,
			contains: `.unknownField: field not declared in schema`},
		{name: "apply unknown metadata", method: "PATCH", path: path("embeddeds", "mytest", strict), ctype: apply,
			body: doc("embeddeds", "mytest", "  unknownMeta: unknown\nspec:\n  template:\n    apiversion: foo/v1\n    kind: Sub\n    metadata:\n        unknownSubMeta: unknown\n        name: subobject\n        namespace: default\n  foo: foo1\n"+ports),
			want: 500, contains: `.metadata.unknownMeta: field not declared in schema`},
		{name: "apply duplicates preserving", method: "PATCH", path: path("preserves", "dup", strict), ctype: apply,
			body: doc("preserves", "dup", "spec:\n  unknown: uk1\n  foo: foo1\n  foo: foo2\n"+ports), want: 400,
			contains: `line 9: key "foo" already set in map`},
		{name: "apply duplicates warn", method: "PATCH", path: path("preserves", "dup", "fieldManager=m&fieldValidation=Warn"), ctype: apply,
			body: doc("preserves", "dup", "spec:\n  unknown: uk1\n  foo: foo1\n  foo: foo2\n"+ports), want: 201},
		{name: "create strict", method: "POST", path: path("schemas", "", "fieldValidation=Strict"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kschemas", "metadata": {"name": "c1", "unknownMeta": 1}, "spec": {"foo": "a", "foo": "b", "bar": 1}}`, want: 400},
		{name: "create strict root", method: "POST", path: path("schemas", "", "fieldValidation=Strict"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kschemas", "metadata": {"name": "c1"}, "spec": {}, "other": 1}`, want: 400},
		{name: "create warn", method: "POST", path: path("schemas", "", "fieldValidation=Warn"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kschemas", "metadata": {"name": "c1", "unknownMeta": 1}, "spec": {"foo": "a", "foo": "b", "bar": 1}}`, want: 201},
		{name: "create default", method: "POST", path: path("schemas", "", ""), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kschemas", "metadata": {"name": "c2"}, "spec": {"bar": 1}}`, want: 201},
		{name: "create ignore", method: "POST", path: path("schemas", "", "fieldValidation=Ignore"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kschemas", "metadata": {"name": "c3", "unknownMeta": 1}, "spec": {"foo": "a", "foo": "b", "bar": 1}}`, want: 201},
		{name: "create yaml strict", method: "POST", path: path("preserves", "", "fieldValidation=Strict"), ctype: yml,
			body: doc("preserves", "y1", "spec:\n  foo: foo1\n  foo: foo2\n"), want: 400},
		{name: "create embedded strict", method: "POST", path: path("embeddeds", "", "fieldValidation=Strict"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kembeddeds", "metadata": {"name": "e1"}, "spec": {"template": {"apiVersion": "v1", "kind": "Sub", "metadata": {"name": "s", "unknownSubMeta": 1}}, "kept": 1}}`, want: 400},
		{name: "create open strict", method: "POST", path: path("opens", "", "fieldValidation=Strict"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kopens", "metadata": {"name": "o1", "unknownMeta": 1}, "spec": {"x": 1, "x": 2}}`, want: 400},
		{name: "create open warn", method: "POST", path: path("opens", "", "fieldValidation=Warn"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kopens", "metadata": {"name": "o1", "unknownMeta": 1}, "spec": {"x": 1, "x": 2}}`, want: 201},
		{name: "update strict", method: "PUT", path: path("schemas", "c1", "fieldValidation=Strict"), ctype: js,
			body: `{"apiVersion": "fv.example.com/v1", "kind": "Kschemas", "metadata": {"name": "c1", "unknownMeta": 1}, "spec": {"bar": 2}}`, want: 400},
		{name: "merge patch strict", method: "PATCH", path: path("schemas", "c1", "fieldValidation=Strict"), ctype: merge,
			body: `{"spec": {"bar": 2, "foo": "x", "foo": "y"}}`, want: 422},
		{name: "merge patch warn", method: "PATCH", path: path("schemas", "c1", "fieldValidation=Warn"), ctype: merge,
			body: `{"spec": {"bar": 2, "foo": "x", "foo": "y"}, "metadata": {"unknownMeta": 3}}`, want: 200},
		{name: "json patch strict", method: "PATCH", path: path("schemas", "c1", "fieldValidation=Strict"), ctype: "application/json-patch+json",
			body: `[{"op": "add", "path": "/spec/bar", "value": 1}]`, want: 422},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, both) })
	}
}

// fvProtobufDeployment is a Deployment named name in protobuf, which has
// no way to carry an unknown or duplicate field.
func fvProtobufDeployment(t *testing.T, name string) string {
	t.Helper()
	labels := map[string]string{"app": "nginx"}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}}},
		},
	}
	var buf strings.Builder
	if err := kprotobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(d, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
