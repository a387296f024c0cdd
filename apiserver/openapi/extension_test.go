package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestSetExtension(t *testing.T) {
	t.Parallel()
	var rs []api.ResourceInfo
	for _, r := range api.Resources {
		if r.Group == "" && (r.Resource == "pods" || r.Resource == "configmaps") {
			rs = append(rs, r)
		}
	}
	d, err := New(rs)
	if err != nil {
		t.Fatal(err)
	}
	get := func(h http.Handler, path string) map[string]any {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	before := get(d.V3(), "/openapi/v3/api/v1")
	err = d.SetExtension(Extension{
		V2Paths:       map[string]json.RawMessage{"/apis/example.com/v1/foos": json.RawMessage(`{"get":{"operationId":"listFoo"}}`)},
		V2Definitions: map[string]json.RawMessage{"com.example.v1.Foo": json.RawMessage(`{"type":"object"}`), "io.k8s.api.core.v1.Pod": json.RawMessage(`{}`)},
		V3:            map[string][]byte{"apis/example.com/v1": []byte(`{"openapi":"3.0.0","paths":{}}`), "api/v1": []byte(`{}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	paths := get(d.V3(), "/openapi/v3")["paths"].(map[string]any)
	entry, ok := paths["apis/example.com/v1"].(map[string]any)
	if !ok || !strings.HasPrefix(entry["serverRelativeURL"].(string), "/openapi/v3/apis/example.com/v1?hash=") || paths["api/v1"] == nil {
		t.Errorf("v3 index: %v", paths)
	}
	if doc := get(d.V3(), "/openapi/v3/apis/example.com/v1"); doc["openapi"] != "3.0.0" {
		t.Errorf("extension document: %v", doc)
	}
	if after := get(d.V3(), "/openapi/v3/api/v1"); len(after) != len(before) {
		t.Error("the extension replaced a built-in group-version")
	}
	v2 := get(d.V2(), "/openapi/v2")
	if _, ok := v2["paths"].(map[string]any)["/apis/example.com/v1/foos"]; !ok {
		t.Error("v2: extension path missing")
	}
	defs := v2["definitions"].(map[string]any)
	if defs["com.example.v1.Foo"] == nil || len(defs["io.k8s.api.core.v1.Pod"].(map[string]any)) == 0 {
		t.Errorf("v2 definitions: Foo %v, Pod replaced: %v", defs["com.example.v1.Foo"], defs["io.k8s.api.core.v1.Pod"])
	}
	// Removing the extension removes what it added.
	if err := d.SetExtension(Extension{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := get(d.V2(), "/openapi/v2")["paths"].(map[string]any)["/apis/example.com/v1/foos"]; ok {
		t.Error("v2 still has the removed extension")
	}
}
