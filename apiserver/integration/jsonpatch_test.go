package integration

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
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

// TestJSONPatchCopyLimit checks the bounds kube-apiserver puts on a JSON
// patch (the fix of CVE-2019-1002100), with its answers: copies that add
// more than 3 MiB are a 422 in apimachinery's generic words, dry run or
// not, and store nothing; more than 10000 operations are a 413; a patch
// within the bounds, copies and moves included, applies as before.
func TestJSONPatchCopyLimit(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	c.must(http.StatusCreated, "POST", cms, configMap("amp", nil, map[string]string{"k": "v"}))
	before := c.must(http.StatusOK, "GET", cms+"/amp", nil)

	const jsonPatch = "application/json-patch+json"
	invalid := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
		"message": "the server rejected our request due to an error in our request", "reason": "Invalid",
		"details": map[string]any{}, "code": float64(422)}
	for _, tc := range []struct {
		name, query, patch string
		code               int
		want               map[string]any
	}{
		{"doubling copies", "", doublingCopies(22), http.StatusUnprocessableEntity, invalid},
		{"doubling copies, dry run", "?dryRun=All", doublingCopies(22), http.StatusUnprocessableEntity, invalid},
		// Forty doublings would be terabytes: refused as soon as 3 MiB are copied.
		{"forty doublings, dry run", "?dryRun=All", doublingCopies(40), http.StatusUnprocessableEntity, invalid},
		{"failed test", "", `[{"op":"test","path":"/data/k","value":"w"}]`, http.StatusUnprocessableEntity, invalid},
		{"too many operations", "", "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/data/k","value":"v"},`, 10001), ",") + "]",
			http.StatusRequestEntityTooLarge, map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
				"message": "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
				"reason":  "RequestEntityTooLarge", "code": float64(413)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("PATCH", cms+"/amp"+tc.query, tc.patch, jsonPatch)
			if got := r.obj(t); r.Code != tc.code || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %d %.500s, want %d %v", r.Code, r.Body, tc.code, tc.want)
			}
		})
	}
	if after := c.must(http.StatusOK, "GET", cms+"/amp", nil); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused patch changed the ConfigMap:\n%v\nnow\n%v", before, after)
	}

	// Within the bounds: a copy, a move, a test, an add.
	out := c.must(http.StatusOK, "PATCH", cms+"/amp", `[{"op":"copy","from":"/data/k","path":"/data/c"},{"op":"move","from":"/data/c","path":"/data/m"},
		{"op":"test","path":"/data/m","value":"v"},{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`, jsonPatch)
	if data := out["data"].(map[string]any); !reflect.DeepEqual(data, map[string]any{"k": "v", "m": "v"}) {
		t.Errorf("patched data %v", data)
	}
}
