package clientintegration

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// TestDynamicClient applies manifests of kinds the test resolves only from
// their apiVersion and kind, as the CLI does, and checks fields the typed
// structs know nothing of survive.
func TestDynamicClient(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	ctx := testContext(t)
	ns := createNamespace(ctx, t, c, "dynamic")

	manifests := []string{
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","labels":{"app":"web"}},
		  "spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":8080}]}}`,
		`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once"},
		  "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},
		  "spec":{"holderIdentity":"me","leaseDurationSeconds":4294967295}}`,
	}
	for _, m := range manifests {
		var u client.Unstructured
		if err := json.Unmarshal([]byte(m), &u); err != nil {
			t.Fatal(err)
		}
		info, ok := api.LookupKind(u.GetAPIVersion(), u.GetKind())
		if !ok {
			t.Fatalf("no resource for %s %s", u.GetAPIVersion(), u.GetKind())
		}
		dc := c.Dynamic(info).Namespace(ns)
		t.Run(info.Resource, func(t *testing.T) {
			created, err := dc.Create(ctx, &u)
			if info.Kind == "Lease" {
				// leaseDurationSeconds is an int32: out of range is refused,
				// not wrapped around.
				if err == nil {
					t.Fatalf("lease with leaseDurationSeconds 2^32-1 was accepted: %v", created.Object["spec"])
				}
				if !apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err) {
					t.Fatalf("out-of-range int32: %v (reason %q)", err, apierrors.ReasonForError(err))
				}
				u.Object["spec"].(map[string]any)["leaseDurationSeconds"] = json.Number("15")
				if created, err = dc.Create(ctx, &u); err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if created.GetNamespace() != ns || created.GetResourceVersion() == "" || created.GetKind() != info.Kind || created.GetAPIVersion() != info.GroupVersion() {
				t.Fatalf("created = %v", created.Object)
			}
			got, err := dc.Get(ctx, created.GetName())
			if err != nil || got.GetResourceVersion() != created.GetResourceVersion() {
				t.Fatalf("get = %v, %v", got, err)
			}
			l, err := dc.List(ctx, client.ListOptions{})
			if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != created.GetName() || l.Kind != info.ListKind() {
				t.Fatalf("list = %+v, %v", l, err)
			}
			p, err := dc.Patch(ctx, created.GetName(), client.MergePatchType, []byte(`{"metadata":{"annotations":{"patched":"yes"}}}`))
			if err != nil {
				t.Fatal(err)
			}
			if a := p.Object["metadata"].(map[string]any)["annotations"].(map[string]any); a["patched"] != "yes" {
				t.Fatalf("annotations after patch = %v", a)
			}
			// Update from the patched object keeps working (numbers are
			// json.Number and must encode back unchanged).
			p.Object["metadata"].(map[string]any)["labels"] = map[string]any{"updated": "true"}
			up, err := dc.Update(ctx, p)
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if rvOf(t, up.GetResourceVersion()) <= rvOf(t, p.GetResourceVersion()) {
				t.Errorf("resourceVersion %s after update of %s", up.GetResourceVersion(), p.GetResourceVersion())
			}
			if _, err := dc.Update(ctx, p); !apierrors.IsConflict(err) {
				t.Errorf("stale dynamic update: %v, want Conflict", err)
			}
			if err := dc.Delete(ctx, created.GetName(), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := dc.Get(ctx, created.GetName()); !apierrors.IsNotFound(err) {
				t.Fatalf("get after delete: %v", err)
			}
		})
	}

	// Service defaults reached the stored object: targetPort as a number,
	// protocol TCP, a ClusterIP type.
	svc, _ := api.LookupKind("v1", "Service")
	var u client.Unstructured
	if err := json.Unmarshal([]byte(manifests[0]), &u); err != nil {
		t.Fatal(err)
	}
	u.Object["metadata"].(map[string]any)["name"] = "web2"
	created, err := c.Dynamic(svc).Namespace(ns).Create(ctx, &u)
	if err != nil {
		t.Fatal(err)
	}
	spec := created.Object["spec"].(map[string]any)
	port := spec["ports"].([]any)[0].(map[string]any)
	if spec["type"] != "ClusterIP" || port["protocol"] != "TCP" || port["targetPort"] != json.Number("8080") {
		t.Errorf("service spec = %v", spec)
	}
	// Unknown fields in a manifest are tolerated.
	if err := json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"k":"v"},"futureField":{"a":1}}`), &u); err != nil {
		t.Fatal(err)
	}
	cm, _ := api.LookupKind("v1", "ConfigMap")
	if _, err := c.Dynamic(cm).Namespace(ns).Create(ctx, &u); err != nil {
		t.Errorf("manifest with an unknown field: %v", err)
	}
	l, err := c.Dynamic(cm).Namespace(ns).List(ctx, client.ListOptions{FieldSelector: "metadata.name=x"})
	if err != nil || !slices.Equal([]string{l.Items[0].GetName()}, []string{"x"}) {
		t.Fatalf("list x: %+v, %v", l, err)
	}
}
