package realcomponents

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestFieldNamesCaseSensitiveAsKube: a body key that differs from a field's
// JSON name only in case ("Replicas" for spec.replicas) is an unknown
// field to kube-apiserver's decoder, not the field (encoding/json matches
// names case-insensitively): with fieldValidation=Ignore both servers drop
// it (the deployment keeps its defaulted, or its exactly named, replicas),
// on create and in a merge patch, and Strict refuses it with the same
// answer.
func TestFieldNamesCaseSensitiveAsKube(t *testing.T) {
	t.Parallel()
	a := startBoth(t)
	const base = "/apis/apps/v1/namespaces/default/deployments"
	deploy := func(name, replicas string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `"},"spec":{` + replicas +
			`"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`
	}
	replicas := func(e *endpoint, name string) string {
		obj := e.must(t, http.StatusOK, "GET", base+"/"+name, "")
		return fmt.Sprint(obj["spec"].(map[string]any)["replicas"])
	}
	for _, e := range a.each() {
		e.must(t, http.StatusCreated, "POST", base+"?fieldValidation=Ignore", deploy("only-upper", `"Replicas":5,`))
		e.must(t, http.StatusCreated, "POST", base+"?fieldValidation=Ignore", deploy("both", `"replicas":2,"Replicas":5,`))
		e.must(t, http.StatusCreated, "POST", base+"?fieldValidation=Ignore", deploy("upper-first", `"Replicas":5,"replicas":3,`))
		e.must(t, http.StatusOK, "PATCH", base+"/both?fieldValidation=Ignore", `{"spec":{"Replicas":7}}`)
		e.must(t, http.StatusOK, "PUT", base+"/upper-first?fieldValidation=Ignore",
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"upper-first","resourceVersion":"`+
				fmt.Sprint(e.must(t, http.StatusOK, "GET", base+"/upper-first", "")["metadata"].(map[string]any)["resourceVersion"])+
				`"},"spec":{"replicas":3,"Replicas":9,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`)
		for name, want := range map[string]string{"only-upper": "1", "both": "2", "upper-first": "3"} {
			if got := replicas(e, name); got != want {
				t.Errorf("%s: deployment %s has replicas %s, want %s", e.name, name, got, want)
			}
		}
	}
	a.sameRefusal(t, "POST", base+"?fieldValidation=Strict", deploy("strict", `"Replicas":5,`))
	// A patch's refusal quotes the whole patched object, which each server
	// writes its own way (key order, uid, resourceVersion): compare the
	// code and the error that ends it.
	for _, e := range a.each() {
		out := e.must(t, http.StatusUnprocessableEntity, "PATCH", base+"/both?fieldValidation=Strict", `{"spec":{"Replicas":7}}`)
		if msg := fmt.Sprint(out["message"]); !strings.HasSuffix(msg, `": strict decoding error: unknown field "spec.Replicas"`) {
			t.Errorf("%s: patch refused with %q", e.name, msg)
		}
	}
}
