package realcomponents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestCRDTableAsKube: kubectl get crd (a Table) prints kube-apiserver
// v1.37's columns on minik8s: name, scope, served versions with the
// storage one marked, creation time, and -o wide the group, kind, short
// names and whether the CRD is established; for a list and for one CRD.
// Charts that ship CRDs (cert-manager, the Prometheus operator, Argo CD,
// MetalLB) showed only the name and the creation time on minik8s.
func TestCRDTableAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	schema := `{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}`
	both.must(t, http.StatusCreated, "POST", crds, fmt.Sprintf(`{"metadata":{"name":"widgets.table.example.com"},"spec":{"group":"table.example.com","scope":"Namespaced",
  "names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wd","wdg"]},
  "versions":[{"name":"v2","served":true,"storage":false,"schema":%[1]s},{"name":"v1","served":true,"storage":true,"schema":%[1]s},{"name":"v0","served":false,"storage":false,"schema":%[1]s}]}}`, schema))
	both.must(t, http.StatusCreated, "POST", crds, fmt.Sprintf(`{"metadata":{"name":"gadgets.table.example.com"},"spec":{"group":"table.example.com","scope":"Cluster",
  "names":{"plural":"gadgets","kind":"Gadget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":%s}]}}`, schema))
	// Established on both before the tables are read.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, e := range both.each() {
		for _, name := range []string{"widgets.table.example.com", "gadgets.table.example.com"} {
			waitFor(ctx, t, e.name+" to establish "+name, func() (bool, string) {
				_, obj := e.do(t, "GET", crds+"/"+name, "")
				status, _ := obj["status"].(map[string]any)
				conds, _ := status["conditions"].([]any)
				for _, c := range conds {
					if m := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
						return true, ""
					}
				}
				return false, fmt.Sprint(status)
			})
		}
	}
	const accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
	for _, path := range []string{crds + "?labelSelector=", crds + "/widgets.table.example.com"} {
		var shapes [2]map[string]any
		for i, e := range both.each() {
			code, _, body := getWith(t, e, path, accept, "")
			if code != http.StatusOK {
				t.Fatalf("%s: GET %s as a Table: %d %s", e.name, path, code, body)
			}
			var table map[string]any
			if err := json.Unmarshal(body, &table); err != nil {
				t.Fatalf("%s: %v", e.name, err)
			}
			shapes[i] = tableShape(table)
			// The creation times differ by the seconds between the servers.
			for j, c := range shapes[i]["columns"].([]any) {
				if c.(map[string]any)["name"] == "Created At" {
					for _, r := range shapes[i]["rows"].([]any) {
						r.([]any)[j] = "<created>"
					}
				}
			}
		}
		if !reflect.DeepEqual(shapes[0], shapes[1]) {
			kj, _ := json.MarshalIndent(shapes[0], "", "  ")
			oj, _ := json.MarshalIndent(shapes[1], "", "  ")
			t.Errorf("GET %s as a Table:\nkube-apiserver: %s\nminik8s:        %s", path, kj, oj)
		}
	}
}
