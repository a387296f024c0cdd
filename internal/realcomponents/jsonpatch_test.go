package realcomponents

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// doublingCopies is the JSON patch of issue 26: a short array, then n
// copies of it into itself, each doubling its size; 22 of them, a 1 KB
// patch, would build an object of about 100 MB in the apiserver's memory.
func doublingCopies(n int) string {
	ops := []string{`{"op":"add","path":"/metadata/finalizers","value":["example.com/aaaaaaaa"]}`}
	for range n {
		ops = append(ops, `{"op":"copy","from":"/metadata/finalizers","path":"/metadata/finalizers/-"}`)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// TestJSONPatchLimitsAsKube sends the same JSON patches to the real
// kube-apiserver v1.37 and to minik8s' apiserver: copies past kube's 3 MiB
// copy limit (doubling copies, dry run or not) and a failed test are
// refused with identical 422s, a patch of more than 10000 operations with
// identical 413s, none of them changes the ConfigMap, and a patch within
// the bounds (copy, move, test, add) gives both the same data and labels.
func TestJSONPatchLimitsAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)

	const cms = "/api/v1/namespaces/default/configmaps"
	both.must(t, http.StatusCreated, "POST", cms, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"amp"},"data":{"k":"v"}}`)
	var before []map[string]any
	for _, e := range both.each() {
		before = append(before, e.must(t, http.StatusOK, "GET", cms+"/amp", ""))
	}
	for _, tc := range []struct {
		name, query, patch string
		code               int
	}{
		{"doubling copies", "", doublingCopies(22), http.StatusUnprocessableEntity},
		{"doubling copies, dry run", "?dryRun=All", doublingCopies(22), http.StatusUnprocessableEntity},
		{"forty doublings, dry run", "?dryRun=All", doublingCopies(40), http.StatusUnprocessableEntity},
		{"failed test", "", `[{"op":"test","path":"/data/k","value":"w"}]`, http.StatusUnprocessableEntity},
		{"missing path", "", `[{"op":"remove","path":"/data/nope"}]`, http.StatusUnprocessableEntity},
		{"too many operations", "", "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/data/k","value":"v"},`, 10001), ",") + "]",
			http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both.sameAnswer(t, tc.code, "PATCH", cms+"/amp"+tc.query, tc.patch)
		})
	}
	for i, e := range both.each() {
		if after := e.must(t, http.StatusOK, "GET", cms+"/amp", ""); !reflect.DeepEqual(after, before[i]) {
			t.Errorf("%s: a refused patch changed the ConfigMap:\n%v\nnow\n%v", e.name, before[i], after)
		}
	}

	// The patched ConfigMaps are compared by what the patch changed:
	// minik8s sets metadata.generation on every kind, kube-apiserver not on
	// ConfigMaps (a difference of its own, not of JSON patches).
	const within = `[{"op":"copy","from":"/data/k","path":"/data/c"},{"op":"move","from":"/data/c","path":"/data/m"},
		{"op":"test","path":"/data/m","value":"v"},{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`
	var patched [][]any
	for _, e := range both.each() {
		out := e.must(t, http.StatusOK, "PATCH", cms+"/amp", within)
		got := e.must(t, http.StatusOK, "GET", cms+"/amp", "")
		patched = append(patched, []any{out["data"], out["metadata"].(map[string]any)["labels"], got["data"], got["metadata"].(map[string]any)["labels"]})
	}
	if !reflect.DeepEqual(patched[0], patched[1]) {
		t.Errorf("the patch within the bounds: kube-apiserver answered and stored %v, minik8s %v", patched[0], patched[1])
	}
}
