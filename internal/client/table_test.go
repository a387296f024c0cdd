package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestTables: the table client sends kubectl get's Accept header and
// includeObject, and reads a Table (cells' numbers as written), or the
// objects a server without tables sends.
func TestTables(t *testing.T) {
	t.Parallel()
	tableBody := `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},
		"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"","priority":0},{"name":"Data","type":"string","format":"","description":"","priority":0}],
		"rows":[{"cells":["a",12345678901234],"object":{"kind":"PartialObjectMetadata","metadata":{"name":"a"}}}]}`
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/ns/pods/plain":
			fmt.Fprint(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"plain","resourceVersion":"3"}}`)
		case "/api/v1/pods":
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"4"},"items":[{"metadata":{"name":"x"}},{"metadata":{"name":"y"}}]}`)
		default:
			fmt.Fprint(w, tableBody)
		}
	})
	c := newTestClient(t, fs.URL)
	ctx := context.Background()
	tc := c.Dynamic(podInfo).Namespace("ns").Tables(api.IncludeObject)

	a, err := tc.List(ctx, ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	req := fs.last(t)
	if req.Accept != TableAccept || req.RawQuery != "includeObject=Object&labelSelector=app%3Dweb" || req.Path != "/api/v1/namespaces/ns/pods" {
		t.Errorf("request %+v", req)
	}
	if a.Table == nil || a.ResourceVersion != "9" || len(a.Table.Rows) != 1 || a.Table.Rows[0].Cells[1] != json.Number("12345678901234") ||
		a.Table.ColumnDefinitions[0].Format != "name" {
		t.Errorf("table answer %+v", a)
	}

	a, err = tc.Get(ctx, "plain")
	if err != nil || a.Table != nil || len(a.Items) != 1 || a.Items[0].GetName() != "plain" || a.ResourceVersion != "3" {
		t.Errorf("object answer %+v %v", a, err)
	}
	a, err = c.Dynamic(podInfo).Tables("").List(ctx, ListOptions{})
	if err != nil || a.Table != nil || len(a.Items) != 2 || a.Items[1].GetName() != "y" || a.ResourceVersion != "4" {
		t.Errorf("list answer %+v %v", a, err)
	}
	if q := fs.last(t).RawQuery; q != "" {
		t.Errorf("no includeObject asked, query %q", q)
	}
}
