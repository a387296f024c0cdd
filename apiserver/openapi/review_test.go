package openapi

import (
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestReviewsAndEviction checks the create-only review kinds are described
// by a POST to their collection alone (no list kind, no object paths), and
// pods/eviction by a POST of a policy/v1 Eviction.
func TestReviewsAndEviction(t *testing.T) {
	t.Parallel()
	d, err := New(slices.Concat(api.Resources, api.ReviewResources))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	authz := decodeJSON(t, mustV3(d)["apis/authorization.k8s.io/v1"].plainJSON())
	paths := path(t, authz, "paths").(map[string]any)
	var names []string
	for p, item := range paths {
		names = append(names, p)
		var ops []string
		for _, m := range []string{"get", "put", "post", "patch", "delete"} {
			if _, ok := item.(map[string]any)[m]; ok {
				ops = append(ops, m)
			}
		}
		if strings.Join(ops, ",") != "post" {
			t.Errorf("%s has operations %v, want post alone", p, ops)
		}
	}
	slices.Sort(names)
	want := "/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews " +
		"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews /apis/authorization.k8s.io/v1/selfsubjectrulesreviews " +
		"/apis/authorization.k8s.io/v1/subjectaccessreviews"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("paths %s, want %s", got, want)
	}
	schemas := path(t, authz, "components", "schemas").(map[string]any)
	if _, ok := schemas["io.k8s.api.authorization.v1.SelfSubjectAccessReview"]; !ok {
		t.Error("no SelfSubjectAccessReview schema")
	}
	for name := range schemas {
		if strings.HasSuffix(name, "ReviewList") {
			t.Errorf("a review has a list kind: %s", name)
		}
	}
	checkRefs(t, "authorization.k8s.io/v1", authz, "#/components/schemas/", schemas)

	core := decodeJSON(t, mustV3(d)["api/v1"].plainJSON())
	ref := path(t, core, "paths", "/api/v1/namespaces/{namespace}/pods/{name}/eviction", "post", "requestBody", "content", "*/*", "schema", "$ref")
	if ref != "#/components/schemas/io.k8s.api.policy.v1.Eviction" {
		t.Errorf("eviction body %v", ref)
	}
}
