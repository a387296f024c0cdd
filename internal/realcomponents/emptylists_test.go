package realcomponents

import (
	"net/http"
	"strings"
	"testing"
)

// TestEmptyListsStoredAsKube writes built-in objects with empty lists in
// fields that have no omitempty (a ClusterRole's "rules: []", as the
// Grafana chart writes its placeholder role, and an EndpointSlice's
// "endpoints: []") to kube-apiserver v1.37 and to minik8s, by create,
// replace and server-side apply, and compares both the answers to the
// writes and what a read gives back. kube keeps built-in objects as
// protobuf, where an empty list is no list: it answers and stores null.
// A replace with the same empty list is no new generation.
func TestEmptyListsStoredAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const (
		roles  = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
		slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
	)
	const role = `{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "empty-rules"}, "rules": []}`
	const slice = `{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "empty-endpoints"}, "addressType": "IPv4", "endpoints": []}`
	// The answer to each write, compared as a read is.
	sameAnswer := func(what, method, path, body string, code int) {
		t.Helper()
		var got [2]map[string]any
		for i, e := range both.each() {
			got[i] = storedComparable(e.must(t, code, method, path, body))
		}
		var diffs []string
		jsonDiff("", got[0], got[1], &diffs)
		if len(diffs) > 0 {
			t.Errorf("%s: the answers differ (kube-apiserver, then minik8s):\n%s", what, strings.Join(diffs, "\n"))
		}
	}
	sameAnswer("create cluster role", "POST", roles, role, http.StatusCreated)
	both.sameStoredAs(t, "cluster role with rules: []", roles+"/empty-rules")
	sameAnswer("create endpoint slice", "POST", slices, slice, http.StatusCreated)
	both.sameStoredAs(t, "endpoint slice with endpoints: []", slices+"/empty-endpoints")

	sameAnswer("replace cluster role", "PUT", roles+"/empty-rules", role, http.StatusOK)
	sameAnswer("replace endpoint slice", "PUT", slices+"/empty-endpoints", slice, http.StatusOK)
	both.sameStoredAs(t, "endpoint slice replaced", slices+"/empty-endpoints")

	apply := func(path, body string) {
		t.Helper()
		for _, e := range both.each() {
			e.apply(t, http.StatusOK, path, "helm", body, true)
		}
	}
	apply(roles+"/empty-rules", role)
	both.sameStoredAs(t, "cluster role applied", roles+"/empty-rules")
	apply(slices+"/empty-endpoints", slice)
	both.sameStoredAs(t, "endpoint slice applied", slices+"/empty-endpoints")
}
