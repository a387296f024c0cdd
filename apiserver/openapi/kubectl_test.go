package openapi

import (
	"encoding/json"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/kube-openapi/pkg/spec3"
	kubeproto "k8s.io/kube-openapi/pkg/util/proto"

	"github.com/minik8s/minik8s/api"
)

// TestKubectlPatchMetadata computes a `kubectl apply` patch of a Pod with
// the strategic-merge metadata read from the documents, through the code
// kubectl uses (v3 first, v2 models as its fallback): the containers list
// must merge by name, not be replaced.
func TestKubectlPatchMetadata(t *testing.T) {
	t.Parallel()
	d := mustNew(t, api.Resources, kubernetesPatchSchema)

	var spec spec3.OpenAPI
	if err := json.Unmarshal(mustV3(d)["api/v1"].plainJSON(), &spec); err != nil {
		t.Fatal(err)
	}
	pod := spec.Components.Schemas["io.k8s.api.core.v1.Pod"]
	if pod == nil {
		t.Fatal("no Pod schema in api/v1")
	}
	v3Meta := strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: spec.Components.Schemas, Schema: pod}

	doc, err := openapiv2.ParseDocument(mustV2(d).plainJSON())
	if err != nil {
		t.Fatal(err)
	}
	models, err := kubeproto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("proto.NewOpenAPIData: %v", err)
	}
	model := models.LookupModel("io.k8s.api.core.v1.Pod")
	if model == nil {
		t.Fatal("no Pod model in v2")
	}
	v2Meta := strategicpatch.NewPatchMetaFromOpenAPI(model)

	original := `{"metadata":{"name":"p","finalizers":["a"]},"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}}`
	modified := `{"metadata":{"name":"p","finalizers":["a","b"]},"spec":{"containers":[{"name":"a","image":"x2"},{"name":"b","image":"y"}]}}`
	for name, meta := range map[string]strategicpatch.LookupPatchMeta{"v3": v3Meta, "v2": v2Meta} {
		patch, err := strategicpatch.CreateThreeWayMergePatch([]byte(original), []byte(modified), []byte(original), meta, true)
		if err != nil {
			t.Errorf("%s: CreateThreeWayMergePatch: %v", name, err)
			continue
		}
		got := string(patch)
		for _, want := range []string{`"$setElementOrder/containers":[{"name":"a"},{"name":"b"}]`, `"containers":[{"image":"x2","name":"a"}]`, `"$setElementOrder/finalizers":["a","b"]`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: patch %s lacks %s", name, got, want)
			}
		}
	}
}
