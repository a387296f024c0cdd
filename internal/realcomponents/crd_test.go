package realcomponents

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// endpoint is one apiserver the same requests go to.
type endpoint struct {
	name string
	base string
	hc   *http.Client
}

// do sends body (YAML or nil; a PATCH's is a merge patch) and returns the answer's code and decoded
// JSON body (a body that is not JSON as {"text": BODY}).
func (e *endpoint) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		data, err := yaml.YAMLToJSON([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
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
		// kube-apiserver's 404 for a path nothing serves is text.
		out = map[string]any{"text": string(data)}
	}
	return resp.StatusCode, out
}

// must is do that fails unless the answer is code.
func (e *endpoint) must(t *testing.T, code int, method, path, body string) map[string]any {
	t.Helper()
	got, out := e.do(t, method, path, body)
	if got != code {
		t.Fatalf("%s: %s %s: got %d, want %d: %v", e.name, method, path, got, code, out)
	}
	return out
}

// kubeEndpoint talks to k as a cluster administrator.
func kubeEndpoint(t *testing.T, k *kubeAPIServer) *endpoint {
	t.Helper()
	certPEM, keyPEM, err := k.ca.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: k.ca.Pool(), Certificates: []tls.Certificate{cert}}}
	return &endpoint{name: "kube-apiserver", base: k.url, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// sameAnswer sends one request to both and fails unless their codes and
// bodies are identical.
func sameAnswer(t *testing.T, kube, ours *endpoint, code int, method, path, body string) {
	t.Helper()
	kc, kb := kube.do(t, method, path, body)
	oc, ob := ours.do(t, method, path, body)
	causesInOrder(t, kb)
	causesInOrder(t, ob)
	if kc != code {
		t.Errorf("kube-apiserver answered %d, the case expects %d: %v", kc, code, kb)
	}
	if details, ok := kb["details"].(map[string]any); ok {
		for _, c := range details["causes"].([]any) {
			t.Logf("kube-apiserver: %v: %v", c.(map[string]any)["field"], c.(map[string]any)["message"])
		}
	}
	if kc != oc || !reflect.DeepEqual(kb, ob) {
		kj, _ := json.MarshalIndent(kb, "", "  ")
		oj, _ := json.MarshalIndent(ob, "", "  ")
		t.Errorf("%s %s:\nkube-apiserver %d:\n%s\nminik8s %d:\n%s", method, path, kc, kj, oc, oj)
	}
}

// causesInOrder sorts an Invalid Status' causes, and the list of them its
// message ends with: kube-apiserver checks an object's properties in Go
// map order, so several causes come in any order. It fails the test when
// the message is not the causes' list.
func causesInOrder(t *testing.T, status map[string]any) {
	t.Helper()
	details, _ := status["details"].(map[string]any)
	raw, _ := details["causes"].([]any)
	if len(raw) < 2 {
		return
	}
	type cause struct{ field, message string }
	var cs []cause
	var listed []string
	for _, c := range raw {
		m := c.(map[string]any)
		f, _ := m["field"].(string)
		msg, _ := m["message"].(string)
		cs = append(cs, cause{f, msg})
		listed = append(listed, f+": "+msg)
	}
	message, _ := status["message"].(string)
	head, list, ok := strings.Cut(message, " is invalid: ")
	if !ok || list != "["+strings.Join(listed, ", ")+"]" {
		t.Errorf("the message does not list the causes in their order: %q, causes %q", message, listed)
		return
	}
	slices.SortStableFunc(raw, func(a, b any) int {
		am, bm := a.(map[string]any), b.(map[string]any)
		return cmp.Or(cmp.Compare(fmt.Sprint(am["field"]), fmt.Sprint(bm["field"])), cmp.Compare(fmt.Sprint(am["message"]), fmt.Sprint(bm["message"])))
	})
	slices.Sort(listed)
	status["message"] = head + " is invalid: [" + strings.Join(listed, ", ") + "]"
}

const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// badCRD is a CRD of group example.com named after plural, with schema
// (indented under openAPIV3Schema).
func badCRD(plural, schema string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]s.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: %[1]s, kind: K%[1]s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
%[2]s`, plural, schema)
}

// widgetsCRD has schema constraints and CEL rules, with a message, a
// messageExpression, a fieldPath and a reason.
const widgetsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: "!has(self.replicas) || self.minReplicas <= self.replicas"
              message: "minReplicas must not exceed replicas"
            - rule: "!has(self.name) || self.name.startsWith('w-')"
              messageExpression: "'name ' + self.name + ' must start with w-'"
              fieldPath: .name
              reason: FieldValueForbidden
            properties:
              size: {type: string, pattern: '^[0-9]+(cm|m)$'}
              color: {type: string, enum: [red, green, blue]}
              replicas: {type: integer, minimum: 0, maximum: 10}
              minReplicas: {type: integer, default: 0}
              name: {type: string, maxLength: 20}
              tags:
                type: array
                maxItems: 2
                items: {type: string}
`

// TestCRDBadInputAsKube sends the same bad input to the real
// kube-apiserver v1.37 and to minik8s' apiserver, and wants the same
// answers, identical once decoded (and causes sorted): CRDs whose schema is not
// structural or whose CEL rules do not compile (422, each cause's field
// path and message), custom objects breaking their schema (422 with every
// cause, CEL rules' messages and field paths), and a CRD whose names clash
// with another's (NamesAccepted False with the naming controller's reason
// and message, not Established, until the other goes).
func TestCRDBadInputAsKube(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real kube-apiserver (skipped with -short)")
	}
	kube := kubeEndpoint(t, startKubeAPIServer(t))
	s := apiservertest.Start(t)
	ours := &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}

	t.Run("invalid CRDs", func(t *testing.T) {
		for _, tc := range []struct{ name, crd string }{
			{"property without type", badCRD("notypes", `        type: object
        properties:
          spec:
            properties:
              a: {type: string}
`)},
			{"additionalProperties with properties", badCRD("bothprops", `        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: string}
            additionalProperties: {type: string}
`)},
			{"CEL syntax error", badCRD("celsyntax", `        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: string}
            x-kubernetes-validations:
            - rule: "self.a +"
`)},
			{"CEL no such field", badCRD("celfields", `        type: object
        properties:
          spec:
            type: object
            properties:
              a: {type: string}
            x-kubernetes-validations:
            - rule: "self.nope == 'x'"
`)},
			{"CEL cost too high", badCRD("celcosts", `        type: object
        properties:
          spec:
            type: object
            properties:
              list:
                type: array
                items: {type: string}
                x-kubernetes-validations:
                - rule: "self.all(x, self.all(y, x.contains(y)))"
`)},
			{"several at once", badCRD("severals", `        type: object
        properties:
          spec:
            properties:
              a: {type: string}
              b:
                type: object
                properties:
                  c: {type: string}
                additionalProperties: {type: string}
            x-kubernetes-validations:
            - rule: "self.a =="
            - rule: "self.nope"
`)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				sameAnswer(t, kube, ours, http.StatusUnprocessableEntity, "POST", crdsPath, tc.crd)
			})
		}
	})

	for _, e := range []*endpoint{kube, ours} {
		e.must(t, http.StatusCreated, "POST", crdsPath, widgetsCRD)
	}
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	for _, e := range []*endpoint{kube, ours} {
		waitServed(t, e, widgets)
	}

	t.Run("invalid objects", func(t *testing.T) {
		for _, tc := range []struct{ name, spec string }{
			{"schema violations", `{size: big, color: purple, replicas: 11, name: a-name-that-is-far-too-long, tags: [a, b, c]}`},
			{"required field missing", `{color: red}`},
			{"wrong types", `{size: 3, replicas: many, tags: x}`},
			{"CEL rules", `{size: 1m, replicas: 2, minReplicas: 3, name: gadget}`},
			{"CEL rule and schema violation", `{size: 1m, replicas: 2, minReplicas: 3, color: purple}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				obj := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: bad}\nspec: " + tc.spec + "\n"
				sameAnswer(t, kube, ours, http.StatusUnprocessableEntity, "POST", widgets, obj)
			})
		}
	})

	t.Run("names clash", func(t *testing.T) {
		// gadgets wants the kind, list kind and short name widgets holds.
		const gadgets = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Widget, shortNames: [wd, gd]}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`
		for _, e := range []*endpoint{kube, ours} {
			e.must(t, http.StatusCreated, "POST", crdsPath, gadgets)
		}
		clash := func(st crdState) bool { return st.conditions["NamesAccepted"] != "" }
		k, o := settle(t, kube, "gadgets.example.com", clash), settle(t, ours, "gadgets.example.com", clash)
		if want := `False/ListKindConflict/"WidgetList" is already in use`; k.conditions["NamesAccepted"] != want {
			t.Errorf("kube-apiserver: NamesAccepted %q, the test expects %q", k.conditions["NamesAccepted"], want)
		}
		if !reflect.DeepEqual(k, o) {
			t.Errorf("clashing CRD:\nkube-apiserver %+v\nminik8s        %+v", k, o)
		}
		for _, e := range []*endpoint{kube, ours} {
			if code, _ := e.do(t, "GET", "/apis/example.com/v1/gadgets", ""); code != http.StatusNotFound {
				t.Errorf("%s serves the clashing CRD: %d", e.name, code)
			}
		}

		// Once widgets is gone, gadgets gets its names and is served.
		for _, e := range []*endpoint{kube, ours} {
			e.must(t, http.StatusOK, "DELETE", crdsPath+"/widgets.example.com", "")
		}
		established := func(st crdState) bool {
			return st.conditions["Established"] == "True/InitialNamesAccepted/the initial names have been accepted"
		}
		k, o = settle(t, kube, "gadgets.example.com", established), settle(t, ours, "gadgets.example.com", established)
		if !reflect.DeepEqual(k, o) {
			t.Errorf("CRD after the clash went:\nkube-apiserver %+v\nminik8s        %+v", k, o)
		}
		for _, e := range []*endpoint{kube, ours} {
			waitServed(t, e, "/apis/example.com/v1/gadgets")
		}

		// A CRD's own accepted names are taken too: its singular (widget,
		// from its kind) may not become one of its short names.
		for _, e := range []*endpoint{kube, ours} {
			e.must(t, http.StatusOK, "PATCH", crdsPath+"/gadgets.example.com", `{"spec": {"names": {"shortNames": [wd, gd, widget]}}}`)
		}
		refused := func(st crdState) bool { return strings.HasPrefix(st.conditions["NamesAccepted"], "False/") }
		k, o = settle(t, kube, "gadgets.example.com", refused), settle(t, ours, "gadgets.example.com", refused)
		if want := `False/ShortNamesConflict/"widget" is already in use`; k.conditions["NamesAccepted"] != want {
			t.Errorf("kube-apiserver: NamesAccepted %q, the test expects %q", k.conditions["NamesAccepted"], want)
		}
		if !reflect.DeepEqual(k, o) {
			t.Errorf("CRD wanting its own singular as a short name:\nkube-apiserver %+v\nminik8s        %+v", k, o)
		}
	})
}

// crdState is what a CRD's status says of its names.
type crdState struct {
	acceptedNames any
	// conditions are STATUS/REASON/MESSAGE by type.
	conditions map[string]string
}

// settle polls the CRD name on e until done, for at most 30 s.
func settle(t *testing.T, e *endpoint, name string, done func(crdState) bool) crdState {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		obj := e.must(t, http.StatusOK, "GET", crdsPath+"/"+name, "")
		st := crdState{conditions: map[string]string{}}
		if status, ok := obj["status"].(map[string]any); ok {
			st.acceptedNames = status["acceptedNames"]
			conds, _ := status["conditions"].([]any)
			for _, c := range conds {
				m := c.(map[string]any)
				st.conditions[fmt.Sprint(m["type"])] = fmt.Sprintf("%v/%v/%v", m["status"], m["reason"], m["message"])
			}
		}
		if done(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: CRD %s did not settle: %+v", e.name, name, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitServed waits until a list of path succeeds on e.
func waitServed(t *testing.T, e *endpoint, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ := e.do(t, "GET", path, "")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not served: %d", e.name, path, code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
