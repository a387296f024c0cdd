package openapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"k8s.io/kube-openapi/pkg/spec3"

	"github.com/minik8s/minik8s/api"
)

// collectRefs returns every "$ref" value in a decoded JSON document.
func collectRefs(v any, out map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && k == "$ref" {
				out[s] = true
				continue
			}
			collectRefs(e, out)
		}
	case []any:
		for _, e := range t {
			collectRefs(e, out)
		}
	}
}

// checkRefs fails unless every $ref of doc names an entry of defs.
func checkRefs(t *testing.T, what string, doc map[string]any, prefix string, defs map[string]any) {
	t.Helper()
	refs := map[string]bool{}
	collectRefs(doc, refs)
	if len(refs) == 0 {
		t.Fatalf("%s: no $ref at all", what)
	}
	for ref := range refs {
		name, ok := strings.CutPrefix(ref, prefix)
		if !ok {
			t.Errorf("%s: $ref %q does not start with %q", what, ref, prefix)
			continue
		}
		if _, ok := defs[name]; !ok {
			t.Errorf("%s: $ref %q does not resolve", what, ref)
		}
	}
}

func decodeJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// path digs into a decoded document.
func path(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v: %q is not inside an object", keys, k)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("%v: no %q", keys, k)
		}
	}
	return v
}

func mustNew(t *testing.T, rs []api.ResourceInfo, patchFor func(string) patchSchema) *Docs {
	t.Helper()
	d, err := build(rs, patchFor)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return d
}

// TestServedResources generates the documents of every registered kind and
// checks they parse as OpenAPI and are closed under $ref.
func TestServedResources(t *testing.T) {
	t.Parallel()
	if len(api.Resources) == 0 {
		t.Fatal("api.Resources is empty")
	}
	d, err := New(api.Resources)
	if err != nil {
		t.Fatalf("New: %v", err)
	}

	// v2: gnostic parses it (as client-go's protobuf path does) and every
	// $ref resolves.
	if _, err := openapiv2.ParseDocument(mustV2(d).plainJSON()); err != nil {
		t.Fatalf("openapiv2.ParseDocument: %v", err)
	}
	doc := decodeJSON(t, mustV2(d).plainJSON())
	defs := path(t, doc, "definitions").(map[string]any)
	checkRefs(t, "v2", doc, "#/definitions/", defs)
	paths := path(t, doc, "paths").(map[string]any)
	for _, want := range []string{"Status", "DeleteOptions", "WatchEvent", "Patch", "ObjectMeta", "ListMeta"} {
		if defs[metaPrefix+"."+want] == nil {
			t.Errorf("v2: no definition of %s", want)
		}
	}
	ids := map[string]bool{}
	for _, item := range paths {
		for _, op := range item.(map[string]any) {
			if o, ok := op.(map[string]any); ok {
				id := o["operationId"].(string)
				if ids[id] {
					t.Errorf("operationId %s used twice", id)
				}
				ids[id] = true
			}
		}
	}

	for _, ri := range api.Resources {
		kindDef := groupPrefix(ri.Group, ri.Version) + "." + ri.Kind
		k, ok := defs[kindDef].(map[string]any)
		if !ok {
			t.Errorf("%s: no definition %s", ri.Kind, kindDef)
			continue
		}
		g := gvk{Group: ri.Group, Version: ri.Version, Kind: ri.Kind}
		if got := jsonOf(t, k["x-kubernetes-group-version-kind"]); !strings.Contains(got, jsonOf(t, g)) {
			t.Errorf("%s: group-version-kind %s lacks %s", ri.Kind, got, jsonOf(t, g))
		}
		if got := path(t, k, "properties", "metadata", "$ref"); got != "#/definitions/"+metaPrefix+".ObjectMeta" {
			t.Errorf("%s: metadata refers to %v", ri.Kind, got)
		}
		if got := path(t, defs, kindDef+"List", "properties", "items", "items", "$ref"); got != "#/definitions/"+kindDef {
			t.Errorf("%s: list items refer to %v", ri.Kind, got)
		}
		scope := ""
		if ri.Namespaced {
			scope = "Namespaced"
		}
		gv := camelGroup(ri.Group) + camel(ri.Version)
		for _, id := range []string{"list", "create", "read", "replace", "patch", "delete"} {
			if want := id + gv + scope + ri.Kind; !ids[want] {
				t.Errorf("%s: no operation %s", ri.Kind, want)
			}
		}
		if want := "delete" + gv + "Collection" + scope + ri.Kind; !ids[want] {
			t.Errorf("%s: no operation %s", ri.Kind, want)
		}
	}

	// v3: every group-version parses with kube-openapi's spec3 and gnostic,
	// and is closed under $ref.
	var index v3Discovery
	if err := json.Unmarshal(mustIndex(d).plainJSON(), &index); err != nil {
		t.Fatal(err)
	}
	wantGVs := map[string]bool{}
	for _, ri := range api.Resources {
		wantGVs[gvPath(ri.Group, ri.Version)] = true
	}
	if len(index.Paths) != len(wantGVs) {
		t.Errorf("v3 discovery lists %d group-versions, want %d", len(index.Paths), len(wantGVs))
	}
	for gv := range wantGVs {
		entry, ok := index.Paths[gv]
		rep := mustV3(d)[gv]
		if !ok || rep == nil {
			t.Errorf("v3: %s missing", gv)
			continue
		}
		if entry.ServerRelativeURL != "/openapi/v3/"+gv+"?hash="+rep.etag {
			t.Errorf("v3 %s: serverRelativeURL %s", gv, entry.ServerRelativeURL)
		}
		var o spec3.OpenAPI
		if err := json.Unmarshal(rep.plainJSON(), &o); err != nil {
			t.Errorf("v3 %s: spec3: %v", gv, err)
			continue
		}
		if o.Version != "3.0.0" || o.Paths == nil || len(o.Paths.Paths) == 0 || o.Components == nil || len(o.Components.Schemas) == 0 {
			t.Errorf("v3 %s: version %q, %v paths, components %v", gv, o.Version, o.Paths, o.Components)
		}
		if _, err := openapiv3.ParseDocument(rep.plainJSON()); err != nil {
			t.Errorf("v3 %s: openapiv3.ParseDocument: %v", gv, err)
		}
		doc := decodeJSON(t, rep.plainJSON())
		checkRefs(t, "v3 "+gv, doc, "#/components/schemas/", path(t, doc, "components", "schemas").(map[string]any))
		for p := range path(t, doc, "paths").(map[string]any) {
			if !strings.HasPrefix(p, "/"+gv+"/") {
				t.Errorf("v3 %s: path %s of another group-version", gv, p)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	a, b := mustNew(t, api.Resources, kubernetesPatchSchema), mustNew(t, api.Resources, kubernetesPatchSchema)
	if !bytes.Equal(mustV2(a).plainJSON(), mustV2(b).plainJSON()) || mustV2(a).etag != mustV2(b).etag {
		t.Error("v2 differs between two builds")
	}
	if !bytes.Equal(mustIndex(a).plainJSON(), mustIndex(b).plainJSON()) {
		t.Error("v3 discovery differs between two builds")
	}
	// The order of the resource table does not matter either.
	rev := slices.Clone(api.Resources)
	slices.Reverse(rev)
	c := mustNew(t, rev, kubernetesPatchSchema)
	if !bytes.Equal(mustV2(a).plainJSON(), mustV2(c).plainJSON()) {
		t.Error("v2 depends on the order of the resources")
	}
}

// Test kinds for the path layout.

type widget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
	Spec           WidgetSpec `json:"spec,omitzero"`
}

type WidgetSpec struct {
	Parts []WidgetPart `json:"parts,omitempty"`
}

type WidgetPart struct {
	Name string `json:"name"`
}

type gadget struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
	Size           int64 `json:"size,omitempty"`
}

var testResources = []api.ResourceInfo{
	{Group: "", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true,
		Subresources: []string{"status", "log", "exec", "binding", "frobnicate"},
		New:          func() api.Object { return &widget{} }},
	{Group: "gadgets.example.k8s.io", Version: "v1beta1", Kind: "Gadget", Resource: "gadgets",
		Subresources: []string{"status"},
		New:          func() api.Object { return &gadget{} }},
}

func TestPathsAndOperations(t *testing.T) {
	t.Parallel()
	d := mustNew(t, testResources, func(kind string) patchSchema {
		if kind != "Widget" {
			return nil
		}
		return fakePatch{"spec.parts": {"name", "merge"}}
	})
	doc := decodeJSON(t, mustV2(d).plainJSON())
	paths := path(t, doc, "paths").(map[string]any)
	var got []string
	for p, item := range paths {
		for m, op := range item.(map[string]any) {
			if m == "parameters" {
				continue
			}
			o := op.(map[string]any)
			got = append(got, p+" "+m+" "+o["operationId"].(string)+" "+o["x-kubernetes-action"].(string))
		}
	}
	sort.Strings(got)
	want := []string{
		"/api/v1/namespaces/{namespace}/widgets delete deleteCoreV1CollectionNamespacedWidget deletecollection",
		"/api/v1/namespaces/{namespace}/widgets get listCoreV1NamespacedWidget list",
		"/api/v1/namespaces/{namespace}/widgets post createCoreV1NamespacedWidget post",
		"/api/v1/namespaces/{namespace}/widgets/{name} delete deleteCoreV1NamespacedWidget delete",
		"/api/v1/namespaces/{namespace}/widgets/{name} get readCoreV1NamespacedWidget get",
		"/api/v1/namespaces/{namespace}/widgets/{name} patch patchCoreV1NamespacedWidget patch",
		"/api/v1/namespaces/{namespace}/widgets/{name} put replaceCoreV1NamespacedWidget put",
		"/api/v1/namespaces/{namespace}/widgets/{name}/binding post createCoreV1NamespacedWidgetBinding post",
		"/api/v1/namespaces/{namespace}/widgets/{name}/exec get connectCoreV1GetNamespacedWidgetExec connect",
		"/api/v1/namespaces/{namespace}/widgets/{name}/exec post connectCoreV1PostNamespacedWidgetExec connect",
		"/api/v1/namespaces/{namespace}/widgets/{name}/frobnicate get readCoreV1NamespacedWidgetFrobnicate get",
		"/api/v1/namespaces/{namespace}/widgets/{name}/log get readCoreV1NamespacedWidgetLog get",
		"/api/v1/namespaces/{namespace}/widgets/{name}/status get readCoreV1NamespacedWidgetStatus get",
		"/api/v1/namespaces/{namespace}/widgets/{name}/status patch patchCoreV1NamespacedWidgetStatus patch",
		"/api/v1/namespaces/{namespace}/widgets/{name}/status put replaceCoreV1NamespacedWidgetStatus put",
		"/api/v1/widgets get listCoreV1WidgetForAllNamespaces list",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets delete deleteGadgetsExampleV1beta1CollectionGadget deletecollection",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets get listGadgetsExampleV1beta1Gadget list",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets post createGadgetsExampleV1beta1Gadget post",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name} delete deleteGadgetsExampleV1beta1Gadget delete",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name} get readGadgetsExampleV1beta1Gadget get",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name} patch patchGadgetsExampleV1beta1Gadget patch",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name} put replaceGadgetsExampleV1beta1Gadget put",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name}/status get readGadgetsExampleV1beta1GadgetStatus get",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name}/status patch patchGadgetsExampleV1beta1GadgetStatus patch",
		"/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name}/status put replaceGadgetsExampleV1beta1GadgetStatus put",
	}
	if !slices.Equal(got, want) {
		t.Errorf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	list := path(t, paths, "/api/v1/namespaces/{namespace}/widgets", "get").(map[string]any)
	var listParams []string
	for _, p := range list["parameters"].([]any) {
		listParams = append(listParams, p.(map[string]any)["name"].(string))
	}
	for _, want := range []string{"labelSelector", "fieldSelector", "resourceVersion", "limit", "continue", "watch", "timeoutSeconds", "allowWatchBookmarks"} {
		if !slices.Contains(listParams, want) {
			t.Errorf("list parameters %v lack %s", listParams, want)
		}
	}
	if got := jsonOf(t, path(t, list, "responses", "200", "schema")); got != `{"$ref":"#/definitions/io.k8s.api.core.v1.WidgetList"}` {
		t.Errorf("list response = %s", got)
	}
	if got := jsonOf(t, path(t, list, "x-kubernetes-group-version-kind")); got != `{"group":"","kind":"Widget","version":"v1"}` {
		t.Errorf("list gvk = %s", got)
	}
	itemParams := path(t, paths, "/api/v1/namespaces/{namespace}/widgets/{name}", "parameters")
	if got := jsonOf(t, itemParams); !strings.Contains(got, `"in":"path","name":"name","required":true`) ||
		!strings.Contains(got, `"in":"path","name":"namespace","required":true`) {
		t.Errorf("object path parameters = %s", got)
	}
	if got := jsonOf(t, path(t, paths, "/apis/gadgets.example.k8s.io/v1beta1/gadgets/{name}", "parameters")); strings.Contains(got, "namespace") {
		t.Errorf("cluster-scoped path has a namespace parameter: %s", got)
	}

	patch := path(t, paths, "/api/v1/namespaces/{namespace}/widgets/{name}/status", "patch").(map[string]any)
	if got := jsonOf(t, patch["consumes"]); got != jsonOf(t, patchMedia) {
		t.Errorf("patch consumes %s", got)
	}
	if !strings.Contains(jsonOf(t, patch["parameters"]), `"in":"body","name":"body","required":true,"schema":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}`) {
		t.Errorf("patch body = %s", jsonOf(t, patch["parameters"]))
	}
	del := path(t, paths, "/api/v1/namespaces/{namespace}/widgets/{name}", "delete").(map[string]any)
	if got := jsonOf(t, path(t, del, "responses")); got != `{"200":{"description":"OK","schema":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status"}},"202":{"description":"Accepted","schema":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status"}},"401":{"description":"Unauthorized"}}` {
		t.Errorf("delete responses = %s", got)
	}
	for _, p := range []string{"gracePeriodSeconds", "propagationPolicy", "dryRun"} {
		if !strings.Contains(jsonOf(t, del["parameters"]), `"name":"`+p+`"`) {
			t.Errorf("delete lacks parameter %s", p)
		}
	}
	create := path(t, paths, "/api/v1/namespaces/{namespace}/widgets", "post").(map[string]any)
	if got := jsonOf(t, path(t, create, "responses")); !strings.Contains(got, `"201":{"description":"Created","schema":{"$ref":"#/definitions/io.k8s.api.core.v1.Widget"}}`) ||
		!strings.Contains(got, `"202":{"description":"Accepted"`) || !strings.Contains(got, `"401"`) {
		t.Errorf("create responses = %s", got)
	}
	exec := path(t, paths, "/api/v1/namespaces/{namespace}/widgets/{name}/exec", "get").(map[string]any)
	if got := jsonOf(t, exec["x-kubernetes-group-version-kind"]); got != `{"group":"","kind":"WidgetExecOptions","version":"v1"}` {
		t.Errorf("exec gvk = %s", got)
	}
	logOp := path(t, paths, "/api/v1/namespaces/{namespace}/widgets/{name}/log", "get").(map[string]any)
	if got := jsonOf(t, path(t, logOp, "responses", "200", "schema")); got != `{"type":"string"}` {
		t.Errorf("log response = %s", got)
	}

	defs := path(t, doc, "definitions").(map[string]any)
	if got := jsonOf(t, path(t, defs, "io.k8s.api.gadgets.v1beta1.Gadget", "x-kubernetes-group-version-kind")); got != `[{"group":"gadgets.example.k8s.io","kind":"Gadget","version":"v1beta1"}]` {
		t.Errorf("Gadget gvk = %s", got)
	}
	if got := jsonOf(t, path(t, defs, "io.k8s.api.core.v1.WidgetSpec", "properties", "parts")); !strings.Contains(got, `"x-kubernetes-patch-merge-key":"name"`) {
		t.Errorf("parts = %s", got)
	}
	if got := jsonOf(t, path(t, defs, deleteOptsName, "x-kubernetes-group-version-kind")); got != `[{"group":"","kind":"DeleteOptions","version":"v1"},{"group":"gadgets.example.k8s.io","kind":"DeleteOptions","version":"v1beta1"}]` {
		t.Errorf("DeleteOptions gvk = %s", got)
	}

	// v3: the same operations, per group-version, with request bodies.
	core := decodeJSON(t, mustV3(d)["api/v1"].plainJSON())
	p3 := path(t, core, "paths", "/api/v1/namespaces/{namespace}/widgets/{name}", "patch").(map[string]any)
	if p3["operationId"] != "patchCoreV1NamespacedWidget" {
		t.Errorf("v3 patch id %v", p3["operationId"])
	}
	content := path(t, p3, "requestBody", "content").(map[string]any)
	if len(content) != 4 || content["application/strategic-merge-patch+json"] == nil {
		t.Errorf("v3 patch content = %s", jsonOf(t, content))
	}
	if !strings.Contains(jsonOf(t, p3["parameters"]), `"name":"fieldValidation","schema":{"type":"string","uniqueItems":true}`) {
		t.Errorf("v3 patch parameters = %s", jsonOf(t, p3["parameters"]))
	}
	if got := jsonOf(t, path(t, p3, "responses", "200", "content", "application/json", "schema")); got != `{"$ref":"#/components/schemas/io.k8s.api.core.v1.Widget"}` {
		t.Errorf("v3 patch response = %s", got)
	}
	if got := jsonOf(t, path(t, core, "components", "schemas", "io.k8s.api.core.v1.Widget", "properties", "metadata")); got != `{"allOf":[{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],"description":"Standard object's metadata."}` {
		t.Errorf("v3 metadata = %s", got)
	}
	schemas := path(t, core, "components", "schemas").(map[string]any)
	if _, ok := schemas["io.k8s.api.gadgets.v1beta1.Gadget"]; ok {
		t.Error("api/v1 document carries the Gadget definition")
	}
}

func TestDuplicateResource(t *testing.T) {
	t.Parallel()
	if _, err := build([]api.ResourceInfo{testResources[0], testResources[0]}, nil); err == nil {
		t.Error("no error for a resource listed twice")
	}
}

func TestGroupNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ group, camel, tag, prefix string }{
		{"", "Core", "core", "io.k8s.api.core.v1"},
		{"apps", "Apps", "apps", "io.k8s.api.apps.v1"},
		{"coordination.k8s.io", "Coordination", "coordination", "io.k8s.api.coordination.v1"},
		{"rbac.authorization.k8s.io", "RbacAuthorization", "rbac_authorization", "io.k8s.api.rbac.v1"},
		{"discovery.k8s.io", "Discovery", "discovery", "io.k8s.api.discovery.v1"},
	} {
		if got := camelGroup(tt.group); got != tt.camel {
			t.Errorf("camelGroup(%q) = %q, want %q", tt.group, got, tt.camel)
		}
		if got := groupTag(tt.group); got != tt.tag {
			t.Errorf("groupTag(%q) = %q, want %q", tt.group, got, tt.tag)
		}
		if got := groupPrefix(tt.group, "v1"); got != tt.prefix {
			t.Errorf("groupPrefix(%q) = %q, want %q", tt.group, got, tt.prefix)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(api.Resources); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProtobufV2(b *testing.B) {
	d, err := New(api.Resources)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := v2ToProto(mustV2(d).plainJSON()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestKindSchemas checks what kubectl relies on in the schemas of the served
// kinds: strategic-merge keys, references and the subresource kinds.
func TestKindSchemas(t *testing.T) {
	t.Parallel()
	d := mustNew(t, api.Resources, kubernetesPatchSchema)
	v2doc := decodeJSON(t, mustV2(d).plainJSON())
	defs := path(t, v2doc, "definitions")
	core := decodeJSON(t, mustV3(d)["api/v1"].plainJSON())
	schemas := path(t, core, "components", "schemas")
	apps := decodeJSON(t, mustV3(d)["apis/apps/v1"].plainJSON())

	containers := `"x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"`
	checks := []struct {
		name string
		got  any
		want string
	}{
		{"v2 Pod metadata", path(t, defs, "io.k8s.api.core.v1.Pod", "properties", "metadata", "$ref"), `"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"`},
		{"v3 Pod metadata", path(t, schemas, "io.k8s.api.core.v1.Pod", "properties", "metadata", "allOf"), `[{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]`},
		{"v2 Pod spec", path(t, defs, "io.k8s.api.core.v1.Pod", "properties", "spec", "$ref"), `"#/definitions/io.k8s.api.core.v1.PodSpec"`},
		{"v2 containers", path(t, defs, "io.k8s.api.core.v1.PodSpec", "properties", "containers"), `{"items":{"$ref":"#/definitions/io.k8s.api.core.v1.Container"},"type":"array",` + containers + `}`},
		{"v3 containers", path(t, schemas, "io.k8s.api.core.v1.PodSpec", "properties", "containers"), `{"items":{"$ref":"#/components/schemas/io.k8s.api.core.v1.Container"},"type":"array",` + containers + `}`},
		{"container ports", path(t, defs, "io.k8s.api.core.v1.Container", "properties", "ports", "x-kubernetes-list-map-keys"), `["containerPort","protocol"]`},
		{"container name required", path(t, defs, "io.k8s.api.core.v1.Container", "required"), `["name"]`},
		{"finalizers", path(t, defs, metaPrefix+".ObjectMeta", "properties", "finalizers"), `{"items":{"type":"string"},"type":"array","x-kubernetes-list-type":"set","x-kubernetes-patch-strategy":"merge"}`},
		{"container port", path(t, defs, "io.k8s.api.core.v1.ContainerPort", "properties", "containerPort"), `{"format":"int32","type":"integer"}`},
		{"resources", path(t, defs, "io.k8s.api.core.v1.ResourceRequirements", "properties", "limits"), `{"additionalProperties":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"},"type":"object"}`},
		{"deployment template", path(t, defs, "io.k8s.api.apps.v1.DeploymentSpec", "properties", "template", "$ref"), `"#/definitions/io.k8s.api.core.v1.PodTemplateSpec"`},
		{"deployment selector", path(t, defs, "io.k8s.api.apps.v1.DeploymentSpec", "properties", "selector", "$ref"), `"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"`},
		{"v3 maxSurge", path(t, apps, "components", "schemas", "io.k8s.api.apps.v1.RollingUpdateDeployment", "properties", "maxSurge"), `{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}`},
		{"v3 IntOrString", path(t, apps, "components", "schemas", intOrStringName), `{"description":"IntOrString is a type that can hold an int32 or a string. In JSON or YAML it is the inner value.","format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}`},
		{"Scale gvk", path(t, defs, "io.k8s.api.autoscaling.v1.Scale", "x-kubernetes-group-version-kind"), `[{"group":"autoscaling","kind":"Scale","version":"v1"}]`},
	}
	for _, c := range checks {
		if got := jsonOf(t, c.got); got != c.want {
			t.Errorf("%s = %s, want %s", c.name, got, c.want)
		}
	}

	paths := path(t, v2doc, "paths")
	ops := []struct{ path, method, id, response string }{
		{"/apis/apps/v1/namespaces/{namespace}/deployments", "post", "createAppsV1NamespacedDeployment", "io.k8s.api.apps.v1.Deployment"},
		{"/api/v1/namespaces/{namespace}/pods", "get", "listCoreV1NamespacedPod", "io.k8s.api.core.v1.PodList"},
		{"/api/v1/namespaces/{namespace}/pods/{name}", "delete", "deleteCoreV1NamespacedPod", "io.k8s.api.core.v1.Pod"},
		{"/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "delete", "deleteAppsV1NamespacedDeployment", statusName},
		{"/api/v1/namespaces/{namespace}/pods/{name}/status", "patch", "patchCoreV1NamespacedPodStatus", "io.k8s.api.core.v1.Pod"},
		{"/api/v1/namespaces/{namespace}/pods/{name}/binding", "post", "createCoreV1NamespacedPodBinding", "io.k8s.api.core.v1.Binding"},
		{"/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "get", "readAppsV1NamespacedDeploymentScale", "io.k8s.api.autoscaling.v1.Scale"},
		{"/apis/apps/v1/namespaces/{namespace}/replicasets/{name}/scale", "patch", "patchAppsV1NamespacedReplicaSetScale", "io.k8s.api.autoscaling.v1.Scale"},
		{"/api/v1/namespaces/{name}/finalize", "put", "replaceCoreV1NamespaceFinalize", "io.k8s.api.core.v1.Namespace"},
		{"/api/v1/nodes/{name}/status", "get", "readCoreV1NodeStatus", "io.k8s.api.core.v1.Node"},
		{"/api/v1/namespaces/{namespace}/pods/{name}/log", "get", "readCoreV1NamespacedPodLog", ""},
		{"/apis/batch/v1/jobs", "get", "listBatchV1JobForAllNamespaces", "io.k8s.api.batch.v1.JobList"},
		{"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}", "put", "replaceCoordinationV1NamespacedLease", "io.k8s.api.coordination.v1.Lease"},
		{"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices", "get", "listDiscoveryV1NamespacedEndpointSlice", "io.k8s.api.discovery.v1.EndpointSliceList"},
	}
	for _, o := range ops {
		op := path(t, paths, o.path, o.method)
		if got := path(t, op, "operationId"); got != o.id {
			t.Errorf("%s %s: operationId %v, want %s", o.method, o.path, got, o.id)
		}
		if o.response == "" {
			continue
		}
		if got := path(t, op, "responses", "200", "schema", "$ref"); got != "#/definitions/"+o.response {
			t.Errorf("%s: 200 is %v, want %s", o.id, got, o.response)
		}
	}
	scaleGVK := jsonOf(t, path(t, paths, "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "put", "x-kubernetes-group-version-kind"))
	if scaleGVK != `{"group":"autoscaling","kind":"Scale","version":"v1"}` {
		t.Errorf("scale operation gvk = %s", scaleGVK)
	}
}
