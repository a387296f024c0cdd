package realcomponents

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

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
	both := startBoth(t)

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
				both.sameAnswer(t, http.StatusUnprocessableEntity, "POST", crdsPath, tc.crd)
			})
		}
	})

	both.must(t, http.StatusCreated, "POST", crdsPath, widgetsCRD)
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	for _, e := range both.each() {
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
				both.sameAnswer(t, http.StatusUnprocessableEntity, "POST", widgets, obj)
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
		both.must(t, http.StatusCreated, "POST", crdsPath, gadgets)
		clash := func(st crdState) bool { return st.conditions["NamesAccepted"] != "" }
		k, o := settle(t, both.kube, "gadgets.example.com", clash), settle(t, both.ours, "gadgets.example.com", clash)
		if want := `False/ListKindConflict/"WidgetList" is already in use`; k.conditions["NamesAccepted"] != want {
			t.Errorf("kube-apiserver: NamesAccepted %q, the test expects %q", k.conditions["NamesAccepted"], want)
		}
		if !reflect.DeepEqual(k, o) {
			t.Errorf("clashing CRD:\nkube-apiserver %+v\nminik8s        %+v", k, o)
		}
		for _, e := range both.each() {
			if code, _ := e.do(t, "GET", "/apis/example.com/v1/gadgets", ""); code != http.StatusNotFound {
				t.Errorf("%s serves the clashing CRD: %d", e.name, code)
			}
		}

		// Once widgets is gone, gadgets gets its names and is served.
		both.must(t, http.StatusOK, "DELETE", crdsPath+"/widgets.example.com", "")
		established := func(st crdState) bool {
			return st.conditions["Established"] == "True/InitialNamesAccepted/the initial names have been accepted"
		}
		k, o = settle(t, both.kube, "gadgets.example.com", established), settle(t, both.ours, "gadgets.example.com", established)
		if !reflect.DeepEqual(k, o) {
			t.Errorf("CRD after the clash went:\nkube-apiserver %+v\nminik8s        %+v", k, o)
		}
		for _, e := range both.each() {
			waitServed(t, e, "/apis/example.com/v1/gadgets")
		}

		// A CRD's own accepted names are taken too: its singular (widget,
		// from its kind) may not become one of its short names.
		both.must(t, http.StatusOK, "PATCH", crdsPath+"/gadgets.example.com", `{"spec": {"names": {"shortNames": [wd, gd, widget]}}}`)
		refused := func(st crdState) bool { return strings.HasPrefix(st.conditions["NamesAccepted"], "False/") }
		k, o = settle(t, both.kube, "gadgets.example.com", refused), settle(t, both.ours, "gadgets.example.com", refused)
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var st crdState
	waitFor(ctx, t, e.name+": CRD "+name+" to settle", func() (bool, string) {
		obj := e.must(t, http.StatusOK, "GET", crdsPath+"/"+name, "")
		st = crdState{conditions: map[string]string{}}
		if status, ok := obj["status"].(map[string]any); ok {
			st.acceptedNames = status["acceptedNames"]
			conds, _ := status["conditions"].([]any)
			for _, c := range conds {
				m := c.(map[string]any)
				st.conditions[fmt.Sprint(m["type"])] = fmt.Sprintf("%v/%v/%v", m["status"], m["reason"], m["message"])
			}
		}
		return done(st), fmt.Sprintf("%+v", st)
	})
	return st
}

// waitServed waits, for at most 30 s, until a list of path succeeds on e.
func waitServed(t *testing.T, e *endpoint, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitFor(ctx, t, e.name+": "+path+" to be served", func() (bool, string) {
		code, _ := e.do(t, "GET", path, "")
		return code == http.StatusOK, strconv.Itoa(code)
	})
}
