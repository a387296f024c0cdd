package integration

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// gizmoCRD declares data.mutation-start and data.mutation-stage-1 but not
// data.mutation-stage-2, as the conformance spec's CRD does, and a spec
// whose size defaults to 3.
const gizmoCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.prune.example.com}
spec:
  group: prune.example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          data:
            type: object
            properties:
              mutation-start: {type: string}
              mutation-stage-1: {type: string}
          spec:
            type: object
            properties:
              size: {type: integer, default: 3}
`

// TestAdmissionWebhookPrunesCustomResources: a mutating webhook's patch
// of a custom resource goes through what decoding it would: fields the
// CRD's structural schema does not declare are pruned and its defaults
// set, before the object is validated and stored, on create and on
// update ("[sig-api-machinery] AdmissionWebhook should mutate custom
// resource with pruning").
func TestAdmissionWebhookPrunesCustomResources(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const gizmos = "/apis/prune.example.com/v1/namespaces/default/gizmos"
	createCRD(t, c, gizmoCRD, gizmos)

	// The webhook adds data.mutation-stage-1 (declared) and
	// data.mutation-stage-2 (not), an empty spec (whose size has a
	// default), and a top-level field nothing declares.
	ca := newWebhookCA(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, "bad review", http.StatusBadRequest)
			return
		}
		patch := admissionv1.PatchTypeJSONPatch
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, PatchType: &patch,
			Patch: []byte(`[{"op":"add","path":"/data/mutation-stage-1","value":"yes"},{"op":"add","path":"/data/mutation-stage-2","value":"yes"},
				{"op":"add","path":"/spec","value":{}},{"op":"add","path":"/extra","value":"x"}]`)}
		review.Request = nil
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg := webhookConfig("MutatingWebhookConfiguration", "mutate-gizmos", srv.URL+"/mutate", ca.pem, "", nil)
	hook := cfg["webhooks"].([]any)[0].(map[string]any)
	hook["rules"] = []any{map[string]any{"operations": []string{"CREATE", "UPDATE"}, "apiGroups": []string{"prune.example.com"},
		"apiVersions": []string{"v1"}, "resources": []string{"gizmos"}}}
	delete(hook, "namespaceSelector")
	createWebhookConfig(t, s, c, cfg)

	want := map[string]any{"mutation-start": "yes", "mutation-stage-1": "yes"}
	check := func(what string, obj map[string]any) {
		t.Helper()
		if !reflect.DeepEqual(obj["data"], want) {
			t.Errorf("%s: data = %v, want %v (mutation-stage-2 pruned)", what, obj["data"], want)
		}
		if spec, _ := obj["spec"].(map[string]any); spec == nil || spec["size"] != float64(3) {
			t.Errorf("%s: spec = %v, want the default size 3", what, obj["spec"])
		}
		if _, ok := obj["extra"]; ok {
			t.Errorf("%s: the undeclared field extra was kept: %v", what, obj)
		}
	}
	gizmo := map[string]any{"apiVersion": "prune.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g"}, "data": map[string]any{"mutation-start": "yes"}}
	check("create", c.must(http.StatusCreated, "POST", gizmos, gizmo))
	stored := c.must(http.StatusOK, "GET", gizmos+"/g", nil)
	check("stored", stored)

	// An update that drops what the webhook added gets it back, pruned.
	stored["data"] = map[string]any{"mutation-start": "yes"}
	delete(stored, "spec")
	check("update", c.must(http.StatusOK, "PUT", gizmos+"/g", stored))
	check("stored after the update", c.must(http.StatusOK, "GET", gizmos+"/g", nil))
}
