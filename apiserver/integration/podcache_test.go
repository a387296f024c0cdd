package integration

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// TestPodCacheKeepsEncodingsOnly: the pods watch cache keeps each pod's
// encoding and no typed value; a reader that needs one gets a decoding
// equal to the pod as read from etcd, a list that needs the objects gets
// them, and a list of encodings only (the JSON and protobuf answers) gets
// the same bytes without them. A kind other than pods keeps its typed
// values.
func TestPodCacheKeepsEncodingsOnly(t *testing.T) {
	s := apiservertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient(t, s)
	created := c.must(201, "POST", "/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod",
		"metadata":{"name":"cached","labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}`)
	createdRV := created["metadata"].(map[string]any)["resourceVersion"]
	st := s.Store("", "pods")
	if err := st.Cacher().WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	o, ok := st.Cacher().Get(st.Key("default", "cached"))
	if !ok {
		t.Fatal("the pod is not in the watch cache")
	}
	if o.Value != nil {
		t.Errorf("the pods cache keeps a typed value %T", o.Value)
	}
	decoded, ok := o.Decoded().(*api.Pod)
	if !ok {
		t.Fatalf("Decoded() = %T", o.Decoded())
	}
	stored, err := st.Get(ctx, "default", "cached")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded, stored) {
		a, _ := json.Marshal(decoded)
		b, _ := json.Marshal(stored)
		t.Errorf("decoded from the cache:\n%s\nread from etcd:\n%s", a, b)
	}
	if decoded.ResourceVersion != createdRV {
		t.Errorf("resourceVersion %q, want %v", decoded.ResourceVersion, createdRV)
	}
	if again := o.Decoded().(*api.Pod); again == decoded {
		t.Error("Decoded() shares one value among readers")
	}

	full, err := st.List(ctx, "default", registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	encoded, err := st.List(ctx, "default", registry.ListOptions{ResourceVersion: "0", EncodedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Items) != 1 || len(encoded.Items) != 1 {
		t.Fatalf("lists of %d and %d items, want 1", len(full.Items), len(encoded.Items))
	}
	if p, ok := full.Items[0].Object.(*api.Pod); !ok || !reflect.DeepEqual(p, stored) {
		t.Errorf("list item object %#v, want the stored pod", full.Items[0].Object)
	}
	if encoded.Items[0].Object != nil {
		t.Errorf("an encodings-only list decoded %T", encoded.Items[0].Object)
	}
	if string(encoded.Items[0].JSON) != string(full.Items[0].JSON) {
		t.Errorf("encodings differ:\n%s\n%s", encoded.Items[0].JSON, full.Items[0].JSON)
	}

	ns := s.Store("", "namespaces")
	if err := ns.Cacher().WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	if o, ok := ns.Cacher().Get(ns.Key("", "default")); !ok || o.Value == nil {
		t.Errorf("the namespaces cache keeps no typed value: %v", ok)
	}
}
