package transform

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
)

var (
	now     = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	podInfo = mustResource("pods")
	v1Table = Target{Group: "meta.k8s.io", Version: "v1", Kind: KindTable}
)

func mustResource(r string) api.ResourceInfo {
	info, ok := api.LookupResource("", r)
	if !ok {
		panic(r)
	}
	return info
}

func pod(name, rv string) *api.Pod {
	return &api.Pod{
		TypeMeta: api.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: rv, Labels: map[string]string{"app": "web"},
			CreationTimestamp: api.NewTime(now.Add(-time.Hour))},
		Spec:   api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "a", Image: "busybox"}}},
		Status: api.PodStatus{Phase: api.PodRunning},
	}
}

func converter(t *testing.T, target Target, info api.ResourceInfo, query string) *Converter {
	t.Helper()
	q, _ := url.ParseQuery(query)
	c, err := New(target, info, q)
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return now }
	return c
}

func decodeTable(t *testing.T, b []byte) api.Table {
	t.Helper()
	var tb api.Table
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return tb
}

func TestAllows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		media  string
		target Target
		want   bool
	}{
		{"application/json", v1Table, true},
		{"application/yaml", v1Table, true},
		{"application/vnd.kubernetes.protobuf", v1Table, false},
		{"application/json", Target{"meta.k8s.io", "v1beta1", KindTable}, true},
		{"application/json", Target{"meta.k8s.io", "v2", KindTable}, false},
		{"application/json", Target{"", "", KindTable}, false},
		{"application/json", Target{"apps", "v1", KindTable}, false},
		{"application/vnd.kubernetes.protobuf", Target{"meta.k8s.io", "v1", KindPartialObjectMetadata}, true},
		{"application/json", Target{"meta.k8s.io", "v1beta1", KindPartialObjectMetadataList}, true},
		{"application/json", Target{"meta.k8s.io", "v1", "Foo"}, false},
	} {
		if got := Allows(tt.media, tt.target); got != tt.want {
			t.Errorf("Allows(%s, %+v) = %v, want %v", tt.media, tt.target, got, tt.want)
		}
	}
}

// TestTableObject: a GET as a table has the columns, one row, the
// object's resourceVersion, and the row object includeObject asks for
// (the metadata by default).
func TestTableObject(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ query, wantObject string }{
		{"", `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web","namespace":"default","resourceVersion":"7","creationTimestamp":"2026-01-02T11:00:00Z","labels":{"app":"web"}}}`},
		{"includeObject=Metadata", `{"kind":"PartialObjectMetadata"`},
		{"includeObject=None", `null`},
		{"includeObject=Object", `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web"`},
	} {
		c := converter(t, v1Table, podInfo, tt.query)
		b, err := c.Object(pod("web", "7"), nil)
		if err != nil {
			t.Fatal(err)
		}
		tb := decodeTable(t, b)
		if tb.Kind != "Table" || tb.APIVersion != "meta.k8s.io/v1" || tb.ResourceVersion != "7" {
			t.Errorf("%s: type %+v, metadata %+v", tt.query, tb.TypeMeta, tb.ListMeta)
		}
		if len(tb.ColumnDefinitions) != 9 || tb.ColumnDefinitions[0].Name != "Name" || tb.ColumnDefinitions[5].Priority != 1 {
			t.Errorf("%s: columns %+v", tt.query, tb.ColumnDefinitions)
		}
		if len(tb.Rows) != 1 {
			t.Fatalf("%s: rows %+v", tt.query, tb.Rows)
		}
		cells, _ := json.Marshal(tb.Rows[0].Cells)
		if want := `["web","0/1","Running","0","60m","\u003cnone\u003e","n1","\u003cnone\u003e","\u003cnone\u003e"]`; string(cells) != want {
			t.Errorf("%s: cells %s, want %s", tt.query, cells, want)
		}
		if !strings.HasPrefix(string(tb.Rows[0].Object), tt.wantObject) {
			t.Errorf("%s: object %s, want %s...", tt.query, tb.Rows[0].Object, tt.wantObject)
		}
	}
}

// TestTableWireShape pins the JSON field names and nulls a client sees.
func TestTableWireShape(t *testing.T) {
	t.Parallel()
	c := converter(t, Target{"meta.k8s.io", "v1beta1", KindTable}, mustResource("configmaps"), "includeObject=None")
	b, err := c.Object(&api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "c", ResourceVersion: "3", CreationTimestamp: api.NewTime(now)}, Data: map[string]string{"a": "b"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"Table","apiVersion":"meta.k8s.io/v1beta1","metadata":{"resourceVersion":"3"},"columnDefinitions":[` +
		`{"name":"Name","type":"string","format":"name","description":"Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names","priority":0},` +
		`{"name":"Data","type":"string","format":"","description":"Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.","priority":0},` +
		`{"name":"Age","type":"string","format":"","description":"CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata","priority":0}],` +
		`"rows":[{"cells":["c",1,"0s"],"object":null}]}`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}

func TestTableList(t *testing.T) {
	t.Parallel()
	remaining := int64(4)
	res := &registry.ListResult{ResourceVersion: "42", Continue: "tok", RemainingItemCount: &remaining}
	for _, p := range []*api.Pod{pod("a", "1"), pod("b", "2")} {
		data, _ := json.Marshal(p)
		res.Items = append(res.Items, registry.Item{Object: p, JSON: data})
	}
	b, err := converter(t, v1Table, podInfo, "includeObject=Object").List(res)
	if err != nil {
		t.Fatal(err)
	}
	tb := decodeTable(t, b)
	if tb.ResourceVersion != "42" || tb.Continue != "tok" || tb.RemainingItemCount == nil || *tb.RemainingItemCount != 4 {
		t.Errorf("list metadata %+v", tb.ListMeta)
	}
	if len(tb.Rows) != 2 || tb.Rows[1].Cells[0] != "b" || string(tb.Rows[1].Object) != string(res.Items[1].JSON) {
		t.Errorf("rows %+v", tb.Rows)
	}

	// An empty list is an empty table, with its columns.
	b, err = converter(t, v1Table, podInfo, "").List(&registry.ListResult{ResourceVersion: "5"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"rows":[]`) || len(decodeTable(t, b).ColumnDefinitions) != 9 {
		t.Errorf("empty table %s", b)
	}
}

func TestPartialObjectMetadata(t *testing.T) {
	t.Parallel()
	pom := Target{"meta.k8s.io", "v1", KindPartialObjectMetadata}
	b, err := converter(t, pom, podInfo, "").Object(pod("web", "7"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got api.PartialObjectMetadata
	if err := json.Unmarshal(b, &got); err != nil || got.Kind != "PartialObjectMetadata" || got.APIVersion != "meta.k8s.io/v1" ||
		got.Name != "web" || got.ResourceVersion != "7" || got.Labels["app"] != "web" {
		t.Errorf("%s (%v)", b, err)
	}
	if strings.Contains(string(b), "spec") {
		t.Errorf("not metadata only: %s", b)
	}

	list := Target{"meta.k8s.io", "v1beta1", KindPartialObjectMetadataList}
	p := pod("a", "1")
	b, err = converter(t, list, podInfo, "").List(&registry.ListResult{ResourceVersion: "9", Items: []registry.Item{{Object: p}}})
	if err != nil {
		t.Fatal(err)
	}
	var l api.PartialObjectMetadataList
	if err := json.Unmarshal(b, &l); err != nil || l.Kind != "PartialObjectMetadataList" || l.APIVersion != "meta.k8s.io/v1beta1" ||
		l.ResourceVersion != "9" || len(l.Items) != 1 || l.Items[0].Name != "a" || l.Items[0].Kind != "PartialObjectMetadata" {
		t.Errorf("%s (%v)", b, err)
	}
	b, err = converter(t, list, podInfo, "").List(&registry.ListResult{ResourceVersion: "9"})
	if err != nil || string(b) != `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1beta1","metadata":{"resourceVersion":"9"},"items":[]}` {
		t.Errorf("empty list: %s (%v)", b, err)
	}
}

// TestNotAcceptable: a list asked of one object, or one object of a list,
// is kube's 406 naming the internal type.
func TestNotAcceptable(t *testing.T) {
	t.Parallel()
	_, err := converter(t, Target{"meta.k8s.io", "v1", KindPartialObjectMetadata}, mustResourceGroup("apps", "deployments"), "").
		List(&registry.ListResult{})
	wantStatus(t, err, 406, "you requested PartialObjectMetadata, but the requested object is a list (*apps.DeploymentList)")
	_, err = converter(t, Target{"meta.k8s.io", "v1", KindPartialObjectMetadataList}, podInfo, "").Object(pod("a", "1"), nil)
	wantStatus(t, err, 406, "you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)")
	_, err = New(v1Table, podInfo, url.Values{"includeObject": {"All"}})
	wantStatus(t, err, 400, `Unable to convert to Table as requested: includeObject: Invalid value: "All": must be 'Metadata', 'Object', 'None', or empty`)
}

func mustResourceGroup(g, r string) api.ResourceInfo {
	info, ok := api.LookupResource(g, r)
	if !ok {
		panic(r)
	}
	return info
}

func wantStatus(t *testing.T, err error, code int32, msg string) {
	t.Helper()
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		t.Fatalf("error %v is not a Status", err)
	}
	if st := se.Status(); st.Code != code || st.Message != msg {
		t.Errorf("status %d %q, want %d %q", st.Code, st.Message, code, msg)
	}
}

// TestWatch: every event becomes a one-row table, the first with the
// columns and the others without; ERROR events pass unchanged; metadata
// watches get PartialObjectMetadata, bookmarks included.
func TestWatch(t *testing.T) {
	t.Parallel()
	line := func(typ string, p *api.Pod) []byte {
		b, _ := json.Marshal(map[string]any{"type": typ, "object": p})
		return append(b, '\n')
	}
	c := converter(t, v1Table, podInfo, "includeObject=None")
	var tables []api.Table
	for i, l := range [][]byte{line("ADDED", pod("a", "1")), line("MODIFIED", pod("a", "2"))} {
		out, err := c.WatchLine(l)
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(out, &ev); err != nil || out[len(out)-1] != '\n' {
			t.Fatalf("%s: %v", out, err)
		}
		if ev.Type != []string{"ADDED", "MODIFIED"}[i] {
			t.Errorf("type %s", ev.Type)
		}
		tables = append(tables, decodeTable(t, ev.Object))
	}
	if len(tables[0].ColumnDefinitions) != 9 || tables[1].ColumnDefinitions != nil {
		t.Errorf("columns: first %d, second %d", len(tables[0].ColumnDefinitions), len(tables[1].ColumnDefinitions))
	}
	if tables[1].ResourceVersion != "2" || len(tables[1].Rows) != 1 || tables[1].Rows[0].Cells[0] != "a" {
		t.Errorf("second table %+v", tables[1])
	}

	// The bookmark that ends the initial events keeps its metadata (the
	// annotation says so) even when rows carry no objects.
	out, err := c.WatchLine([]byte(`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"5","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	var bm struct{ Object api.Table }
	if err := json.Unmarshal(out, &bm); err != nil || bm.Object.ResourceVersion != "5" || len(bm.Object.Rows) != 1 ||
		!strings.Contains(string(bm.Object.Rows[0].Object), `"k8s.io/initial-events-end":"true"`) {
		t.Errorf("initial-events-end bookmark: %s (%v)", out, err)
	}

	errLine := []byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":410}}` + "\n")
	if out, err := c.WatchLine(errLine); err != nil || string(out) != string(errLine) {
		t.Errorf("error event: %s (%v)", out, err)
	}

	m := converter(t, Target{"meta.k8s.io", "v1", KindPartialObjectMetadata}, podInfo, "")
	out, err = m.WatchLine([]byte(`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"))
	want := `{"type":"BOOKMARK","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
	if err != nil || string(out) != want {
		t.Errorf("bookmark: %s (%v)", out, err)
	}
	out, err = m.WatchLine(line("DELETED", pod("gone", "13")))
	if err != nil || !strings.HasPrefix(string(out), `{"type":"DELETED","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"gone"`) ||
		strings.Contains(string(out), "spec") {
		t.Errorf("deleted: %s (%v)", out, err)
	}
}
