package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// kubectlAccept is what kubectl v1.37's get sends.
const kubectlAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// getAccept GETs path with an Accept header.
func getAccept(t *testing.T, s *apiservertest.Server, path, accept string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body
}

func table(t *testing.T, body []byte) api.Table {
	t.Helper()
	var tb api.Table
	if err := json.Unmarshal(body, &tb); err != nil || tb.Kind != "Table" {
		t.Fatalf("not a table: %s (%v)", body, err)
	}
	return tb
}

func columnNames(tb api.Table) string {
	var names []string
	for _, c := range tb.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return strings.Join(names, ",")
}

// TestTablesForKubectl: the Accept header of kubectl get is answered with
// a meta.k8s.io Table on LIST and GET, with kube-apiserver's columns and
// cells, the row objects includeObject asks for, and a watch of tables
// whose first event alone carries the columns.
func TestTablesForKubectl(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	created := c.must(201, "POST", "/api/v1/namespaces/default/pods", pod("web-1", "app", "side"))
	c.must(201, "POST", "/api/v1/namespaces/default/pods", pod("web-2", "app"))

	code, hdr, body := getAccept(t, s, "/api/v1/namespaces/default/pods", kubectlAccept)
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("list: %d %s %s", code, hdr.Get("Content-Type"), body)
	}
	tb := table(t, body)
	if tb.APIVersion != "meta.k8s.io/v1" || tb.ResourceVersion == "" {
		t.Errorf("list table %+v %+v", tb.TypeMeta, tb.ListMeta)
	}
	if got := columnNames(tb); got != "Name,Ready,Status,Restarts,Age,IP,Node,Nominated Node,Readiness Gates" {
		t.Errorf("columns %s", got)
	}
	if len(tb.Rows) != 2 {
		t.Fatalf("rows %+v", tb.Rows)
	}
	cells := tb.Rows[0].Cells
	if cells[0] != "web-1" || cells[1] != "0/2" || cells[2] != "Pending" || cells[3] != "0" || cells[6] != "<none>" {
		t.Errorf("cells %v", cells)
	}
	var partial api.PartialObjectMetadata
	if err := json.Unmarshal(tb.Rows[0].Object, &partial); err != nil || partial.Kind != "PartialObjectMetadata" ||
		partial.APIVersion != "meta.k8s.io/v1" || partial.Name != "web-1" || partial.Namespace != "default" {
		t.Errorf("row object %s (%v)", tb.Rows[0].Object, err)
	}

	// GET of one object: one row, the object's resourceVersion.
	_, _, body = getAccept(t, s, "/api/v1/namespaces/default/pods/web-1?includeObject=Object", kubectlAccept)
	tb = table(t, body)
	if tb.ResourceVersion != rv(created) || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "web-1" {
		t.Errorf("get table %+v", tb)
	}
	var full map[string]any
	if json.Unmarshal(tb.Rows[0].Object, &full); full["kind"] != "Pod" || full["spec"] == nil {
		t.Errorf("includeObject=Object: %s", tb.Rows[0].Object)
	}
	_, _, body = getAccept(t, s, "/api/v1/namespaces/default/pods?includeObject=None", kubectlAccept)
	if tb = table(t, body); string(tb.Rows[0].Object) != "null" {
		t.Errorf("includeObject=None: %s", tb.Rows[0].Object)
	}

	// The scale subresource's own table.
	c.must(201, "POST", "/apis/apps/v1/namespaces/default/deployments", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": 3, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": map[string]any{"containers": []any{map[string]any{"name": "a", "image": "i"}}}}}})
	_, _, body = getAccept(t, s, "/apis/apps/v1/namespaces/default/deployments/web/scale", kubectlAccept)
	if tb = table(t, body); columnNames(tb) != "Name,Desired,Available,Age" || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "web" || tb.Rows[0].Cells[1] != float64(3) {
		t.Errorf("scale table %s", body)
	}

	// v1beta1 when asked; YAML too.
	_, _, body = getAccept(t, s, "/api/v1/namespaces/default/pods", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
	if tb = table(t, body); tb.APIVersion != "meta.k8s.io/v1beta1" {
		t.Errorf("v1beta1: %s", tb.APIVersion)
	}
	code, hdr, body = getAccept(t, s, "/api/v1/namespaces/default/pods/web-2", "application/yaml;as=Table;v=v1;g=meta.k8s.io")
	if code != 200 || hdr.Get("Content-Type") != "application/yaml" || !strings.Contains(string(body), "kind: Table") {
		t.Errorf("yaml table: %d %s %s", code, hdr.Get("Content-Type"), body)
	}

	// Refusals: an unknown shape, a table in protobuf, a bad includeObject,
	// metadata of one object asked of a list.
	for _, tt := range []struct{ path, accept, status string }{
		{"/api/v1/namespaces/default/pods", "application/json;as=Foo;v=v1;g=meta.k8s.io", "406 NotAcceptable only the following media types are accepted: "},
		{"/api/v1/namespaces/default/pods/web-1", "application/json;as=Table", "406 NotAcceptable only the following media types are accepted: "},
		{"/api/v1/namespaces/default/pods", "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", "406 NotAcceptable only the following media types are accepted: "},
		{"/api/v1/namespaces/default/pods?includeObject=All", kubectlAccept, `400 BadRequest Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`},
		{"/api/v1/namespaces/default/pods", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io", "406 NotAcceptable you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)"},
	} {
		code, _, body := getAccept(t, s, tt.path, tt.accept)
		var st api.Status
		_ = json.Unmarshal(body, &st)
		if got := strings.Join([]string{strconv.Itoa(code), string(st.Reason), st.Message}, " "); !strings.HasPrefix(got, tt.status) || st.Kind != "Status" {
			t.Errorf("%s with %s: %s, want %s...", tt.path, tt.accept, got, tt.status)
		}
	}
	// An unknown shape first is passed over for the client's next choice.
	if _, _, body = getAccept(t, s, "/api/v1/namespaces/default/pods", "application/json;as=Foo;v=v1;g=meta.k8s.io,"+kubectlAccept); table(t, body).Kind != "Table" {
		t.Errorf("fallback to the next clause: %s", body)
	}

	// A watch of tables.
	_, _, body = getAccept(t, s, "/api/v1/namespaces/default/pods", kubectlAccept)
	events := watchAccept(t, s, "/api/v1/namespaces/default/pods?watch=true&resourceVersion="+table(t, body).ResourceVersion, kubectlAccept)
	c.must(201, "POST", "/api/v1/namespaces/default/pods", pod("web-3", "app"))
	c.must(200, "PATCH", "/api/v1/namespaces/default/pods/web-3", `{"metadata":{"labels":{"x":"y"}}}`, "application/merge-patch+json")
	for i, want := range []string{"ADDED", "MODIFIED"} {
		ev := <-events
		tb := table(t, ev.Object)
		if ev.Type != want || len(tb.Rows) != 1 || tb.Rows[0].Cells[0] != "web-3" {
			t.Fatalf("event %d: %s %s", i, ev.Type, ev.Object)
		}
		if (i == 0) != (len(tb.ColumnDefinitions) == 9) || (i > 0 && tb.ColumnDefinitions != nil) {
			t.Errorf("event %d columns: %d", i, len(tb.ColumnDefinitions))
		}
	}
}

type rawEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watchAccept opens a watch with an Accept header and streams its events
// until the test ends.
func watchAccept(t *testing.T, s *apiservertest.Server, path, accept string) <-chan rawEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+path, nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("watch %s: %v %v", path, resp, err)
	}
	events := make(chan rawEvent, 100)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var ev rawEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type != "BOOKMARK" {
				events <- ev
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return events
}

// TestTablesEveryKind: every served kind lists as a table whose rows have
// as many cells as columns.
func TestTablesEveryKind(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	c.must(201, "POST", "/api/v1/namespaces/default/configmaps", configMap("cm", nil, map[string]string{"a": "b"}))
	for _, info := range api.Resources {
		path := "/api/" + info.Version + "/" + info.Resource
		if info.Group != "" {
			path = "/apis/" + info.GroupVersion() + "/" + info.Resource
		}
		code, _, body := getAccept(t, s, path, kubectlAccept)
		if code != 200 {
			t.Errorf("%s: %d %s", path, code, body)
			continue
		}
		tb := table(t, body)
		if len(tb.ColumnDefinitions) < 2 || tb.ColumnDefinitions[0].Description == "" {
			t.Errorf("%s: columns %+v", path, tb.ColumnDefinitions)
		}
		for _, r := range tb.Rows {
			// kube-apiserver's IPAddress rows carry the age in a cell
			// without a column (printers.go declares NAME and PARENTREF).
			if info.Kind == "IPAddress" && len(r.Cells) == 3 && len(tb.ColumnDefinitions) == 2 {
				continue
			}
			if len(r.Cells) != len(tb.ColumnDefinitions) {
				t.Errorf("%s: %d cells for %d columns", path, len(r.Cells), len(tb.ColumnDefinitions))
			}
		}
	}
}

// TestMetadataInformer: client-go's metadata client and a metadata
// informer (as the garbage collector and quota use them) list, get and
// watch pods as PartialObjectMetadata.
func TestMetadataInformer(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	c.must(201, "POST", "/api/v1/namespaces/default/pods", pod("before", "app"))

	mc, err := metadata.NewForConfig(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}

	l, err := mc.Resource(pods).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "before" || l.ResourceVersion == "" {
		t.Fatalf("list: %+v %v", l, err)
	}
	got, err := mc.Resource(pods).Namespace("default").Get(ctx, "before", metav1.GetOptions{})
	if err != nil || got.Name != "before" || got.UID == "" {
		t.Fatalf("get: %+v %v", got, err)
	}

	factory := metadatainformer.NewSharedInformerFactory(mc, 0)
	inf := factory.ForResource(pods).Informer()
	var mu sync.Mutex
	var seen []string
	record := func(what string, obj any) {
		m, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				m, _ = d.Obj.(*metav1.PartialObjectMetadata)
			}
		}
		if m == nil {
			t.Errorf("%s: %T is not PartialObjectMetadata", what, obj)
			return
		}
		mu.Lock()
		seen = append(seen, what+" "+m.Name+" "+m.Labels["v"])
		mu.Unlock()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { record("add", o) },
		UpdateFunc: func(_, o any) { record("update", o) },
		DeleteFunc: func(o any) { record("delete", o) },
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("metadata informer did not sync")
	}
	c.must(201, "POST", "/api/v1/namespaces/default/pods", pod("after", "app"))
	c.must(200, "PATCH", "/api/v1/namespaces/default/pods/after", `{"metadata":{"labels":{"v":"2"}}}`, "application/merge-patch+json")
	c.must(200, "DELETE", "/api/v1/namespaces/default/pods/after?gracePeriodSeconds=0", nil)

	want := []string{"add before ", "add after ", "update after 2", "delete after 2"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := strings.Join(seen, "|") == strings.Join(want, "|")
		cur := append([]string(nil), seen...)
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("informer saw %q, want %q", cur, want)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The metadata client's patch (how the garbage collector edits owner
	// references) answers with the object's metadata.
	p, err := mc.Resource(pods).Namespace("default").Patch(ctx, "before", types.MergePatchType, []byte(`{"metadata":{"labels":{"v":"3"}}}`), metav1.PatchOptions{})
	if err != nil || p.Labels["v"] != "3" {
		t.Errorf("patch: %+v %v", p, err)
	}
}
