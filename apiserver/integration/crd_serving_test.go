package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// widgetCRD is a CRD with most of what a schema can say: two versions
// (v1 stored), defaults, enums, bounds, a pattern, a CEL rule, a
// preserved subtree, status and scale subresources, printer columns, a
// selectable field, short names and categories.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all, toys]
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
            properties:
              size:
                type: string
                pattern: '^[0-9]+(cm|m)$'
              color:
                type: string
                enum: [red, green, blue]
                default: red
              replicas:
                type: integer
                minimum: 0
                maximum: 10
              minReplicas:
                type: integer
                default: 0
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              replicas:
                type: integer
              selector:
                type: string
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - name: Color
      type: string
      jsonPath: .spec.color
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    selectableFields:
    - jsonPath: .spec.color
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

func yamlObject(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// createCRD creates a CRD and waits until its first version answers a
// list and its Established condition is True, as a client waits with
// kubectl wait --for condition=Established: as in kube, the resource may
// be served a moment before the status says so. It returns how long
// serving took from the create.
func createCRD(t *testing.T, c *tclient, doc, listPath string) time.Duration {
	t.Helper()
	start := time.Now()
	obj := yamlObject(t, doc)
	c.must(http.StatusCreated, "POST", crdPath, obj)
	name, _ := obj["metadata"].(map[string]any)["name"].(string)
	deadline := time.Now().Add(10 * time.Second)
	var took time.Duration
	for {
		if took == 0 {
			if r := c.do("GET", listPath, nil, ""); r.Code == http.StatusOK {
				took = time.Since(start)
			}
		}
		if took != 0 && crdEstablished(c.must(http.StatusOK, "GET", crdPath+"/"+name, nil)) {
			return took
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served and Established 10s after its CRD was created", listPath)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// crdEstablished reports whether the CRD object's Established condition
// is True.
func crdEstablished(crd map[string]any) bool {
	st, _ := crd["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, x := range conds {
		if m, _ := x.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func widget(name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app": name}}, "spec": spec}
}

func causes(t *testing.T, status map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	details, _ := status["details"].(map[string]any)
	cs, _ := details["causes"].([]any)
	for _, c := range cs {
		m := c.(map[string]any)
		f, _ := m["field"].(string)
		msg, _ := m["message"].(string)
		out[f] = msg
	}
	return out
}

func TestCRDServing(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const ns = "/apis/example.com/v1/namespaces/default/widgets"
	took := createCRD(t, c, widgetCRD, ns)
	t.Logf("served %v after the CRD's create (BenchmarkCRDServed measures it)", took)

	crd := c.must(200, "GET", crdPath+"/widgets.example.com", nil)
	st := crd["status"].(map[string]any)
	conds := map[string]string{}
	for _, x := range st["conditions"].([]any) {
		m := x.(map[string]any)
		conds[m["type"].(string)] = m["status"].(string) + "/" + m["reason"].(string)
	}
	if conds["NamesAccepted"] != "True/NoConflicts" || conds["Established"] != "True/InitialNamesAccepted" {
		t.Errorf("conditions = %v", conds)
	}
	if sv := st["storedVersions"]; fmt.Sprint(sv) != "[v1]" {
		t.Errorf("storedVersions = %v", sv)
	}

	t.Run("discovery", func(t *testing.T) {
		list := c.must(200, "GET", "/apis/example.com/v1", nil)
		got := map[string]map[string]any{}
		for _, r := range list["resources"].([]any) {
			got[r.(map[string]any)["name"].(string)] = r.(map[string]any)
		}
		w := got["widgets"]
		if w == nil || w["kind"] != "Widget" || w["namespaced"] != true || fmt.Sprint(w["shortNames"]) != "[wd]" ||
			fmt.Sprint(w["categories"]) != "[all toys]" || w["singularName"] != "widget" {
			t.Errorf("widgets in discovery: %v", w)
		}
		if got["widgets/status"] == nil || got["widgets/scale"] == nil || got["widgets/scale"]["kind"] != "Scale" {
			t.Errorf("subresources in discovery: %v", got)
		}
		groups := c.must(200, "GET", "/apis", nil)
		found := false
		for _, g := range groups["groups"].([]any) {
			g := g.(map[string]any)
			if g["name"] == "example.com" {
				found = true
				pv := g["preferredVersion"].(map[string]any)["version"]
				if pv != "v1" || len(g["versions"].([]any)) != 2 {
					t.Errorf("group example.com: %v", g)
				}
			}
		}
		if !found {
			t.Error("example.com is not in /apis")
		}
	})

	t.Run("openapi", func(t *testing.T) {
		// Published before the resource is served.
		idx := c.must(200, "GET", "/openapi/v3", nil)
		if _, ok := idx["paths"].(map[string]any)["apis/example.com/v1"]; !ok {
			t.Fatalf("/openapi/v3 does not list apis/example.com/v1")
		}
		doc := c.must(200, "GET", "/openapi/v3/apis/example.com/v1", nil)
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		w, ok := schemas["com.example.v1.Widget"].(map[string]any)
		if !ok {
			t.Fatalf("no com.example.v1.Widget in %v", keys(schemas))
		}
		spec := w["properties"].(map[string]any)["spec"].(map[string]any)
		if fmt.Sprint(spec["required"]) != "[size]" {
			t.Errorf("Widget spec schema: %v", spec)
		}
		v2 := c.must(200, "GET", "/openapi/v2", nil)
		if _, ok := v2["definitions"].(map[string]any)["com.example.v1.Widget"]; !ok {
			t.Errorf("no com.example.v1.Widget in /openapi/v2")
		}
		if _, ok := v2["paths"].(map[string]any)["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]; !ok {
			t.Errorf("no widget paths in /openapi/v2")
		}
	})

	t.Run("create defaults and prunes", func(t *testing.T) {
		obj := widget("w1", map[string]any{"size": "3m", "replicas": 2, "unknown": "x",
			"extra": map[string]any{"anything": map[string]any{"goes": true}}})
		obj["status"] = map[string]any{"replicas": 9}
		out := c.must(201, "POST", ns, obj)
		spec := out["spec"].(map[string]any)
		if spec["color"] != "red" || spec["minReplicas"] != float64(0) {
			t.Errorf("defaults not applied: %v", spec)
		}
		if _, ok := spec["unknown"]; ok {
			t.Errorf("unknown field kept: %v", spec)
		}
		if fmt.Sprint(spec["extra"]) != "map[anything:map[goes:true]]" {
			t.Errorf("preserved subtree: %v", spec["extra"])
		}
		if _, ok := out["status"]; ok {
			t.Errorf("status set on create: %v", out["status"])
		}
		if meta(out)["generation"] != float64(1) || meta(out)["uid"] == "" {
			t.Errorf("metadata: %v", meta(out))
		}
	})

	t.Run("invalid objects get every cause", func(t *testing.T) {
		bad := widget("w-bad", map[string]any{"size": "big", "color": "purple", "replicas": 11, "minReplicas": 12})
		r := c.do("POST", ns, bad, "")
		if r.Code != http.StatusUnprocessableEntity {
			t.Fatalf("got %d: %s", r.Code, r.Body)
		}
		got := causes(t, r.obj(t))
		want := map[string]string{
			"spec.size":     `Invalid value: "big": spec.size in body should match '^[0-9]+(cm|m)$'`,
			"spec.color":    `Unsupported value: "purple": supported values: "red", "green", "blue"`,
			"spec.replicas": `Invalid value: 11: spec.replicas in body should be less than or equal to 10`,
			// The CEL rules wait for a valid object, and say so.
			"<nil>": "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
		}
		for f, msg := range want {
			if got[f] != msg {
				t.Errorf("cause %s = %q, want %q", f, got[f], msg)
			}
		}
		if len(got) != len(want) {
			t.Errorf("causes = %v, want %v", got, want)
		}
		status := r.obj(t)
		if status["reason"] != "Invalid" || status["details"].(map[string]any)["kind"] != "Widget" ||
			!strings.HasPrefix(status["message"].(string), `Widget.example.com "w-bad" is invalid: [`) {
			t.Errorf("status: %v", status)
		}
		// CEL rules run once the schema is satisfied.
		r = c.do("POST", ns, widget("w-bad", map[string]any{"size": "1m", "replicas": 2, "minReplicas": 3}), "")
		if got := causes(t, r.obj(t)); r.Code != 422 || got["spec"] != `Invalid value: minReplicas must not exceed replicas` {
			t.Errorf("CEL rule: %d %v", r.Code, got)
		}
		// Admission applies as to any kind: no objects in a namespace that does not exist.
		r = c.do("POST", "/apis/example.com/v1/namespaces/nowhere/widgets", widget("w-ns", map[string]any{"size": "1m"}), "")
		if r.Code != http.StatusNotFound || !strings.Contains(string(r.Body), `namespaces \"nowhere\" not found`) {
			t.Errorf("missing namespace: %d %s", r.Code, r.Body)
		}
		r = c.do("POST", ns, widget("w-bad", map[string]any{}), "")
		if got := causes(t, r.obj(t)); r.Code != 422 || got["spec.size"] != "Required value" {
			t.Errorf("missing size: %d %v", r.Code, got)
		}
	})

	for _, n := range []string{"w2", "w3"} {
		c.must(201, "POST", ns, widget(n, map[string]any{"size": "1m", "color": "blue", "replicas": 1}))
	}

	t.Run("selectors and paging", func(t *testing.T) {
		names := func(list map[string]any) []string {
			var out []string
			for _, it := range list["items"].([]any) {
				out = append(out, name(it.(map[string]any)))
			}
			return out
		}
		if got := names(c.must(200, "GET", ns+"?labelSelector=app%3Dw2", nil)); fmt.Sprint(got) != "[w2]" {
			t.Errorf("labelSelector: %v", got)
		}
		if got := names(c.must(200, "GET", ns+"?fieldSelector=metadata.name%3Dw3", nil)); fmt.Sprint(got) != "[w3]" {
			t.Errorf("metadata.name: %v", got)
		}
		if got := names(c.must(200, "GET", "/apis/example.com/v1/widgets?fieldSelector=spec.color%3Dblue", nil)); fmt.Sprint(got) != "[w2 w3]" {
			t.Errorf("spec.color (selectable): %v", got)
		}
		if r := c.do("GET", ns+"?fieldSelector=spec.size%3D1m", nil, ""); r.Code != 400 {
			t.Errorf("unselectable field: %d %s", r.Code, r.Body)
		}
		page := c.must(200, "GET", ns+"?limit=2", nil)
		cont, _ := page["metadata"].(map[string]any)["continue"].(string)
		if got := names(page); fmt.Sprint(got) != "[w1 w2]" || cont == "" {
			t.Fatalf("first page: %v %q", got, cont)
		}
		if got := names(c.must(200, "GET", ns+"?limit=2&continue="+cont, nil)); fmt.Sprint(got) != "[w3]" {
			t.Errorf("second page: %v", got)
		}
	})

	t.Run("patches", func(t *testing.T) {
		out := c.must(200, "PATCH", ns+"/w2", `{"spec":{"replicas":3}}`, "application/merge-patch+json")
		if out["spec"].(map[string]any)["replicas"] != float64(3) || meta(out)["generation"] != float64(2) {
			t.Errorf("merge patch: %v", out)
		}
		out = c.must(200, "PATCH", ns+"/w2", `[{"op":"replace","path":"/spec/color","value":"green"}]`, "application/json-patch+json")
		if out["spec"].(map[string]any)["color"] != "green" {
			t.Errorf("json patch: %v", out)
		}
		if r := c.do("PATCH", ns+"/w2", `{"spec":{"replicas":4}}`, "application/strategic-merge-patch+json"); r.Code != http.StatusUnsupportedMediaType {
			t.Errorf("strategic merge patch: %d %s", r.Code, r.Body)
		}
		if r := c.do("PATCH", ns+"/w2", `{"spec":{"replicas":-1}}`, "application/merge-patch+json"); r.Code != 422 {
			t.Errorf("invalid merge patch: %d %s", r.Code, r.Body)
		}
	})

	t.Run("server-side apply", func(t *testing.T) {
		cfg := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w4\nspec:\n  size: 2m\n  replicas: 5\n"
		out := c.must(201, "PATCH", ns+"/w4?fieldManager=alice", cfg, "application/apply-patch+yaml")
		mf, _ := meta(out)["managedFields"].([]any)
		if len(mf) != 1 || mf[0].(map[string]any)["manager"] != "alice" || !strings.Contains(fmt.Sprint(mf[0]), "f:replicas") {
			t.Fatalf("managedFields: %v", mf)
		}
		r := c.do("PATCH", ns+"/w4?fieldManager=bob", strings.Replace(cfg, "replicas: 5", "replicas: 6", 1), "application/apply-patch+yaml")
		if r.Code != http.StatusConflict || !strings.Contains(string(r.Body), `conflict with \"alice\": .spec.replicas`) {
			t.Errorf("conflicting apply: %d %s", r.Code, r.Body)
		}
		out = c.must(200, "PATCH", ns+"/w4?fieldManager=bob&force=true", strings.Replace(cfg, "replicas: 5", "replicas: 6", 1), "application/apply-patch+yaml")
		if out["spec"].(map[string]any)["replicas"] != float64(6) {
			t.Errorf("forced apply: %v", out["spec"])
		}
	})

	t.Run("status and scale", func(t *testing.T) {
		cur := c.must(200, "GET", ns+"/w1", nil)
		cur["status"] = map[string]any{"replicas": 2, "selector": "app=w1"}
		cur["spec"].(map[string]any)["replicas"] = 7
		out := c.must(200, "PUT", ns+"/w1/status", cur)
		if out["spec"].(map[string]any)["replicas"] != float64(2) || out["status"].(map[string]any)["replicas"] != float64(2) {
			t.Errorf("status update: spec %v status %v", out["spec"], out["status"])
		}
		if meta(out)["generation"] != float64(1) {
			t.Errorf("a status write bumped the generation: %v", meta(out)["generation"])
		}
		out["status"] = map[string]any{"replicas": 5}
		out = c.must(200, "PUT", ns+"/w1", out)
		if out["status"].(map[string]any)["replicas"] != float64(2) {
			t.Errorf("main update changed the status: %v", out["status"])
		}
		sc := c.must(200, "GET", ns+"/w1/scale", nil)
		if sc["kind"] != "Scale" || sc["apiVersion"] != "autoscaling/v1" || fmt.Sprint(sc["spec"]) != "map[replicas:2]" ||
			fmt.Sprint(sc["status"]) != "map[replicas:2 selector:app=w1]" {
			t.Errorf("scale: %v", sc)
		}
		sc["spec"] = map[string]any{"replicas": 4}
		c.must(200, "PUT", ns+"/w1/scale", sc)
		if got := c.must(200, "GET", ns+"/w1", nil)["spec"].(map[string]any)["replicas"]; got != float64(4) {
			t.Errorf("replicas after scale = %v", got)
		}
		c.must(200, "PATCH", ns+"/w1/scale", `{"spec":{"replicas":1}}`, "application/merge-patch+json")
		if got := c.must(200, "GET", ns+"/w1", nil)["spec"].(map[string]any)["replicas"]; got != float64(1) {
			t.Errorf("replicas after scale patch = %v", got)
		}
	})

	t.Run("table", func(t *testing.T) {
		r := c.get(ns, "application/json;as=Table;v=v1;g=meta.k8s.io")
		if r.Code != 200 {
			t.Fatalf("table: %d %s", r.Code, r.Body)
		}
		tab := r.obj(t)
		var cols []string
		for _, cd := range tab["columnDefinitions"].([]any) {
			cols = append(cols, cd.(map[string]any)["name"].(string)+":"+cd.(map[string]any)["type"].(string))
		}
		if fmt.Sprint(cols) != "[Name:string Color:string Replicas:integer Age:date]" {
			t.Errorf("columns: %v", cols)
		}
		row := tab["rows"].([]any)[1].(map[string]any)["cells"].([]any)
		if row[0] != "w2" || row[1] != "green" || row[2] != float64(3) {
			t.Errorf("row: %v", row)
		}
	})

	t.Run("other version", func(t *testing.T) {
		out := c.must(200, "GET", "/apis/example.com/v1beta1/namespaces/default/widgets/w2", nil)
		if out["apiVersion"] != "example.com/v1beta1" || out["spec"].(map[string]any)["color"] != "green" {
			t.Errorf("v1beta1: %v", out)
		}
		// Written through v1beta1, stored as v1 (the storage version) under
		// /registry/GROUP/RESOURCE/NAMESPACE/NAME.
		obj := widget("w5", map[string]any{"size": "1m"})
		obj["apiVersion"] = "example.com/v1beta1"
		if out := c.must(201, "POST", "/apis/example.com/v1beta1/namespaces/default/widgets", obj); out["apiVersion"] != "example.com/v1beta1" {
			t.Errorf("created through v1beta1: %v", out)
		}
		kv, err := s.Backend().Client().Get(context.Background(), strings.TrimSuffix(s.Options.EtcdPrefix, "/")+"/example.com/widgets/default/w5")
		if err != nil || len(kv.Kvs) != 1 {
			t.Fatalf("read etcd: %v", err)
		}
		if !strings.HasPrefix(string(kv.Kvs[0].Value), `{"apiVersion":"example.com/v1","kind":"Widget",`) {
			t.Errorf("stored: %s", kv.Kvs[0].Value)
		}
		if out := c.must(200, "GET", ns+"/w5", nil); out["apiVersion"] != "example.com/v1" {
			t.Errorf("read through v1: %v", out)
		}
		c.must(200, "DELETE", ns+"/w5", nil)
	})

	t.Run("protobuf", func(t *testing.T) {
		if r := c.get(ns+"/w2", "application/vnd.kubernetes.protobuf"); r.Code != http.StatusNotAcceptable {
			t.Errorf("protobuf only: %d %s", r.Code, r.Body)
		}
		if r := c.get(ns+"/w2", "application/vnd.kubernetes.protobuf, application/json"); r.Code != 200 || !json.Valid(r.Body) {
			t.Errorf("protobuf or JSON: %d %s", r.Code, r.Body)
		}
		// Metadata-only lists (the garbage collector's, controller-runtime's
		// metadata informers) may be protobuf, as in kube.
		meta := "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
		if r := c.get(ns, meta); r.Code != 200 || !strings.HasPrefix(string(r.Body), "k8s\x00") {
			t.Errorf("metadata list: %d %q", r.Code, r.Body[:min(len(r.Body), 80)])
		}
		if r := c.do("POST", ns, "k8s\x00junk", "application/vnd.kubernetes.protobuf"); r.Code != http.StatusUnsupportedMediaType {
			t.Errorf("protobuf body: %d %s", r.Code, r.Body)
		}
		// client-go configured for protobuf (as controller-runtime's
		// defaults are) falls back to JSON for custom resources.
		dc, err := dynamic.NewForConfig(&rest.Config{Host: s.URL(), ContentConfig: rest.ContentConfig{
			AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json", ContentType: "application/vnd.kubernetes.protobuf"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dc.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).
			Namespace("default").Get(context.Background(), "w2", metav1.GetOptions{}); err != nil {
			t.Errorf("dynamic client with protobuf settings: %v", err)
		}
	})
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// get is a GET with an Accept header.
func (c *tclient) get(path, accept string) response {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.Header.Set("Accept", accept)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{Code: resp.StatusCode, Body: data}
}

func TestCRDWatchDynamic(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	createCRD(t, c, widgetCRD, "/apis/example.com/v1/widgets")
	dc, err := dynamic.NewForConfig(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ri := dc.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := ri.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	u := &unstructured.Unstructured{Object: widget("dyn", map[string]any{"size": "1cm"})}
	created, err := ri.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(created.Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ri.Delete(ctx, "dyn", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 3 {
		select {
		case ev := <-w.ResultChan():
			obj := ev.Object.(*unstructured.Unstructured)
			r, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
			got = append(got, fmt.Sprintf("%s %s %d", ev.Type, obj.GetName(), r))
		case <-ctx.Done():
			t.Fatalf("events so far: %v", got)
		}
	}
	if want := []string{string(watch.Added) + " dyn 0", string(watch.Modified) + " dyn 3", string(watch.Deleted) + " dyn 3"}; !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
}

// TestCRDInvalid sends CRDs kube-apiserver refuses, and one whose names
// clash with another's.
func TestCRDInvalid(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	base := func(name, plural, schemaYAML string) map[string]any {
		return yamlObject(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %s.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: %s, kind: K%s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
%s
`, name, plural, plural, schemaYAML))
	}
	for _, tc := range []struct {
		name   string
		obj    map[string]any
		causes map[string]string
	}{
		{"non-structural", base("things", "things", "        type: object\n        properties:\n          spec:\n            properties:\n              a: {type: string}\n"),
			map[string]string{"spec.validation.openAPIV3Schema.properties[spec].type": "Required value: must not be empty for specified object fields"}},
		{"bad CEL", base("cels", "cels", "        type: object\n        x-kubernetes-validations:\n        - rule: \"self.nope +\"\n"),
			map[string]string{"spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule": ""}},
		// The messages kube-apiserver v1.37 gives (internal/realcomponents'
		// TestCRDBadInputAsKube compares the whole answers with it).
		{"additionalProperties with properties", base("boths", "boths", "        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              a: {type: string}\n            additionalProperties: {type: string}\n"),
			map[string]string{"spec.validation.openAPIV3Schema.properties[spec].additionalProperties": "Forbidden: additionalProperties and properties are mutual exclusive"}},
		{"CEL no such field", base("fields", "fields", "        type: object\n        properties:\n          a: {type: string}\n        x-kubernetes-validations:\n        - rule: \"self.nope == 'x'\"\n"),
			map[string]string{"spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule": `Invalid value: {"Rule":"self.nope == 'x'","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:5: undefined field 'nope'
 | self.nope == 'x'
 | ....^`}},
		{"CEL cost too high", base("costs", "costs", "        type: object\n        properties:\n          list:\n            type: array\n            items: {type: string}\n            x-kubernetes-validations:\n            - rule: \"self.all(x, self.all(y, x.contains(y)))\"\n"),
			map[string]string{"spec.validation.openAPIV3Schema.properties[list].x-kubernetes-validations[0].rule": "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
				"spec.validation.openAPIV3Schema": "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"}},
		{"no storage version", yamlObject(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nostore.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: nostore, kind: NoStore}
  versions:
  - {name: v1, served: true, storage: false, schema: {openAPIV3Schema: {type: object}}}
`), map[string]string{"spec.versions": `Invalid value: [{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version`}},
		{"bad name", yamlObject(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: wrong.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: things, kind: Thing}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`), map[string]string{"metadata.name": `Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("POST", crdPath, tc.obj, "")
			if r.Code != http.StatusUnprocessableEntity {
				t.Fatalf("got %d: %s", r.Code, r.Body)
			}
			// A field may have several causes: each wanted message is one.
			got := map[string][]string{}
			details, _ := r.obj(t)["details"].(map[string]any)
			cs, _ := details["causes"].([]any)
			for _, c := range cs {
				m := c.(map[string]any)
				f, _ := m["field"].(string)
				msg, _ := m["message"].(string)
				got[f] = append(got[f], msg)
			}
			for f, msg := range tc.causes {
				if len(got[f]) == 0 || (msg != "" && !slices.Contains(got[f], msg)) {
					t.Errorf("causes of %s = %q, want %q; all: %v", f, got[f], msg, got)
				}
			}
		})
	}

	// Names: a second CRD wanting a short name the first has is not
	// accepted, and not established.
	c.must(201, "POST", crdPath, base("firsts", "firsts", "        type: object\n"))
	// The first holds its names once they are accepted (kube checks a new
	// CRD's names against the others' status.acceptedNames).
	for deadline := time.Now().Add(5 * time.Second); ; {
		got := c.must(200, "GET", crdPath+"/firsts.example.com", nil)
		st, _ := got["status"].(map[string]any)
		if names, _ := st["acceptedNames"].(map[string]any); names != nil && names["plural"] == "firsts" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first CRD's names not accepted: %v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	second := base("seconds", "seconds", "        type: object\n")
	second["spec"].(map[string]any)["names"].(map[string]any)["shortNames"] = []any{"firsts"}
	c.must(201, "POST", crdPath, second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := c.must(200, "GET", crdPath+"/seconds.example.com", nil)
		conds := map[string]string{}
		if st, ok := got["status"].(map[string]any); ok {
			cs, _ := st["conditions"].([]any)
			for _, x := range cs {
				m := x.(map[string]any)
				conds[m["type"].(string)] = fmt.Sprintf("%s/%s/%s", m["status"], m["reason"], m["message"])
			}
		}
		if conds["NamesAccepted"] == `False/ShortNamesConflict/"firsts" is already in use` &&
			conds["Established"] == "False/NotAccepted/not all names are accepted" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("conditions of the clashing CRD: %v", conds)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := c.do("GET", "/apis/example.com/v1/seconds", nil, ""); r.Code != http.StatusNotFound {
		t.Errorf("the clashing CRD is served: %d", r.Code)
	}
	// The clash gone, the names are accepted and the CRD served.
	c.must(200, "DELETE", crdPath+"/firsts.example.com", nil)
	for {
		conds := crdConditions(t, c, "seconds.example.com")
		if conds["NamesAccepted"] == "True/NoConflicts/no conflicts found" &&
			conds["Established"] == "True/InitialNamesAccepted/the initial names have been accepted" &&
			c.do("GET", "/apis/example.com/v1/seconds", nil, "").Code == http.StatusOK {
			break
		}
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("conditions once the clash is gone: %v", conds)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCRDDeletion deletes a CRD with objects: they go first, then it.
// While an object's finalizer holds the deletion, the CRD is Terminating:
// its objects are read and updated but none is created (requests run
// meanwhile, which -race checks against the controller's marking).
func TestCRDDeletion(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const ns = "/apis/example.com/v1/namespaces/default/widgets"
	createCRD(t, c, widgetCRD, ns)
	for _, n := range []string{"a", "b"} {
		c.must(201, "POST", ns, widget(n, map[string]any{"size": "1m"}))
	}
	held := widget("held", map[string]any{"size": "1m"})
	meta(held)["finalizers"] = []any{"example.com/hold"}
	c.must(201, "POST", ns, held)

	// Readers all along the deletion.
	stop := make(chan struct{})
	readers := make(chan error, 1)
	go func() {
		defer close(readers)
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := http.Get(s.URL() + ns + "/held")
			if err != nil {
				readers <- err
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
				readers <- fmt.Errorf("GET during the deletion: %d %s", resp.StatusCode, body)
				return
			}
			time.Sleep(5 * time.Millisecond) // a reader, not a load generator
		}
	}()
	defer func() {
		close(stop)
		if err := <-readers; err != nil {
			t.Error(err)
		}
	}()

	out := c.must(200, "DELETE", crdPath+"/widgets.example.com", nil)
	if fmt.Sprint(meta(out)["finalizers"]) != "[customresourcecleanup.apiextensions.k8s.io]" {
		t.Errorf("finalizers of the deleted CRD: %v", meta(out)["finalizers"])
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		conds := crdConditions(t, c, "widgets.example.com")
		held := meta(c.must(200, "GET", ns+"/held", nil))
		if conds["Terminating"] == "True/InstanceDeletionInProgress/CustomResource deletion is in progress" &&
			c.do("GET", ns+"/a", nil, "").Code == http.StatusNotFound && c.do("GET", ns+"/b", nil, "").Code == http.StatusNotFound &&
			held["deletionTimestamp"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CRD waiting for its objects: conditions %v, held object %v", conds, held)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := c.do("POST", ns, widget("late", map[string]any{"size": "1m"}), "")
	if st := r.obj(t); r.Code != http.StatusMethodNotAllowed || st["reason"] != "MethodNotAllowed" ||
		st["message"] != "create not allowed while custom resource definition is terminating" {
		t.Errorf("create while the CRD is terminating: %d %s", r.Code, r.Body)
	}
	c.must(200, "PATCH", ns+"/held", `{"metadata":{"finalizers":null}}`, "application/merge-patch+json")
	for c.do("GET", crdPath+"/widgets.example.com", nil, "").Code != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatalf("the CRD is still there: %s", c.do("GET", crdPath+"/widgets.example.com", nil, "").Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for c.do("GET", ns, nil, "").Code != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("widgets are still served")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Recreated, the resource has no objects left.
	createCRD(t, c, widgetCRD, ns)
	if items := c.must(200, "GET", ns, nil)["items"].([]any); len(items) != 0 {
		t.Errorf("objects survived their CRD: %v", items)
	}
}

// TestCRDDeletionUnserved deletes a CRD whose versions are no longer
// served: its stored objects, of every namespace, are deleted all the
// same before it goes, as kube's finalizer decides on what is stored.
func TestCRDDeletionUnserved(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const ns = "/apis/example.com/v1/namespaces/default/widgets"
	createCRD(t, c, widgetCRD, ns)
	c.must(201, "POST", ns, widget("a", map[string]any{"size": "1m"}))
	c.must(201, "POST", "/apis/example.com/v1/namespaces/kube-system/widgets", widget("b", map[string]any{"size": "1m"}))
	prefix := strings.TrimSuffix(s.Options.EtcdPrefix, "/") + "/example.com/widgets/"
	stored := func() []string {
		t.Helper()
		resp, err := s.Backend().Client().Get(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, kv := range resp.Kvs {
			out = append(out, strings.TrimPrefix(string(kv.Key), prefix))
		}
		return out
	}
	if got := fmt.Sprint(stored()); got != "[default/a kube-system/b]" {
		t.Fatalf("stored before: %s", got)
	}

	crd := c.must(200, "GET", crdPath+"/widgets.example.com", nil)
	for _, v := range crd["spec"].(map[string]any)["versions"].([]any) {
		v.(map[string]any)["served"] = false
	}
	c.must(200, "PUT", crdPath+"/widgets.example.com", crd)
	deadline := time.Now().Add(15 * time.Second)
	for c.do("GET", ns, nil, "").Code != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("widgets are still served")
		}
		time.Sleep(20 * time.Millisecond)
	}

	c.must(200, "DELETE", crdPath+"/widgets.example.com", nil)
	for c.do("GET", crdPath+"/widgets.example.com", nil, "").Code != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatalf("the CRD is still there: %s", c.do("GET", crdPath+"/widgets.example.com", nil, "").Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := stored(); len(got) != 0 {
		t.Errorf("objects left in etcd after their CRD went: %v", got)
	}
}

// crdConditions are a CRD's conditions by type, as STATUS/REASON/MESSAGE.
func crdConditions(t *testing.T, c *tclient, name string) map[string]string {
	t.Helper()
	got := c.must(200, "GET", crdPath+"/"+name, nil)
	conds := map[string]string{}
	if st, ok := got["status"].(map[string]any); ok {
		cs, _ := st["conditions"].([]any)
		for _, x := range cs {
			m := x.(map[string]any)
			conds[m["type"].(string)] = fmt.Sprintf("%s/%s/%s", m["status"], m["reason"], m["message"])
		}
	}
	return conds
}

// TestCRDClusterScoped serves a cluster-scoped custom resource.
func TestCRDClusterScoped(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	doc := strings.NewReplacer("widgets", "planets", "widget\n", "planet\n", "kind: Widget", "kind: Planet",
		"shortNames: [wd]", "shortNames: [pl]", "scope: Namespaced", "scope: Cluster").Replace(widgetCRD)
	createCRD(t, c, doc, "/apis/example.com/v1/planets")
	p := widget("mars", map[string]any{"size": "3m"})
	p["kind"] = "Planet"
	out := c.must(201, "POST", "/apis/example.com/v1/planets", p)
	if _, ok := meta(out)["namespace"]; ok {
		t.Errorf("a cluster-scoped object has a namespace: %v", meta(out))
	}
	if r := c.do("GET", "/apis/example.com/v1/namespaces/default/planets/mars", nil, ""); r.Code != http.StatusNotFound {
		t.Errorf("namespaced path of a cluster-scoped resource: %d", r.Code)
	}
	list := c.must(200, "GET", "/apis/example.com/v1", nil)
	for _, r := range list["resources"].([]any) {
		if r := r.(map[string]any); r["name"] == "planets" && r["namespaced"] != false {
			t.Errorf("discovery: %v", r)
		}
	}
	c.must(200, "GET", "/apis/example.com/v1/planets/mars", nil)
}

// TestCRDUpdate changes a served CRD: its new schema applies to the next
// writes, a new version is served, the objects stay, and watches of the
// old serving end so clients re-watch.
func TestCRDUpdate(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const ns = "/apis/example.com/v1/namespaces/default/widgets"
	createCRD(t, c, widgetCRD, ns)
	c.must(201, "POST", ns, widget("keep", map[string]any{"size": "1m", "replicas": 5}))
	w := c.watch(ns + "?resourceVersion=0")
	if ev := w.next(5 * time.Second); ev.Type != "ADDED" || name(ev.Object) != "keep" {
		t.Fatalf("first event: %v", ev)
	}
	crd := c.must(200, "GET", crdPath+"/widgets.example.com", nil)
	spec := crd["spec"].(map[string]any)
	versions := spec["versions"].([]any)
	v1 := versions[0].(map[string]any)
	props := v1["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
	props["replicas"].(map[string]any)["maximum"] = 3
	props["shape"] = map[string]any{"type": "string", "default": "round"}
	v2 := map[string]any{"name": "v2", "served": true, "storage": false,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	spec["versions"] = append(versions, v2)
	out := c.must(200, "PUT", crdPath+"/widgets.example.com", crd)
	if meta(out)["generation"] != float64(2) {
		t.Errorf("generation after the update: %v", meta(out)["generation"])
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := c.do("POST", ns, widget("big", map[string]any{"size": "1m", "replicas": 5}), "")
		if r.Code == http.StatusUnprocessableEntity && strings.Contains(string(r.Body), "should be less than or equal to 3") {
			break
		}
		if r.Code == http.StatusCreated {
			c.must(200, "DELETE", ns+"/big", nil)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new schema does not apply: %d %s", r.Code, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := c.must(200, "GET", "/apis/example.com/v2/namespaces/default/widgets/keep", nil); got["apiVersion"] != "example.com/v2" {
		t.Errorf("through v2: %v", got)
	}
	// A default the schema gained shows on objects stored before, in
	// reads and lists, as kube defaults what it reads from etcd.
	if got := c.must(200, "GET", ns+"/keep", nil)["spec"].(map[string]any); got["shape"] != "round" {
		t.Errorf("old object after a new default: %v", got)
	}
	if got := c.must(200, "GET", ns+"?fieldSelector=metadata.name%3Dkeep", nil)["items"].([]any)[0].(map[string]any)["spec"].(map[string]any); got["shape"] != "round" {
		t.Errorf("old object listed after a new default: %v", got)
	}
	if got := c.must(200, "GET", "/apis/example.com", nil); len(got["versions"].([]any)) != 3 || got["preferredVersion"].(map[string]any)["version"] != "v2" {
		t.Errorf("group after the update: %v", got)
	}
	// The watch of the old serving ends.
	end := time.After(10 * time.Second)
	for closed := false; !closed; {
		select {
		case _, ok := <-w.events:
			closed = !ok
		case <-end:
			t.Fatal("the watch outlived the serving it came from")
		}
	}
}

// TestCRDRestart restarts the apiserver on its data: the custom resource
// is served as soon as the server is, with its objects.
func TestCRDRestart(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	const ns = "/apis/example.com/v1/namespaces/default/widgets"
	createCRD(t, c, widgetCRD, ns)
	c.must(201, "POST", ns, widget("persisted", map[string]any{"size": "1m"}))
	opts := s.Options
	s.Shutdown()
	s2 := apiservertest.StartWith(t, opts)
	c2 := newClient(t, s2)
	if got := c2.must(200, "GET", ns+"/persisted", nil); got["spec"].(map[string]any)["color"] != "red" {
		t.Errorf("after the restart: %v", got)
	}
	if r := c2.do("GET", "/readyz", nil, ""); r.Code != 200 {
		t.Errorf("readyz after the restart: %d %s", r.Code, r.Body)
	}
}
