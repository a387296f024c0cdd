package registry

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestDropEmptyCollections: a built-in object reads back as kube's
// protobuf storage gives it (empty lists and maps as none, at any depth,
// map values included), byte strings and custom resources as written.
func TestDropEmptyCollections(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		obj  api.Object
		want string
	}{
		{"empty rules", &api.ClusterRole{Rules: []api.PolicyRule{}},
			`{"metadata":{},"rules":null}`},
		{"empty list inside a list", &api.ClusterRole{Rules: []api.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{}}}},
			`{"metadata":{},"rules":[{"verbs":["get"]}]}`},
		{"empty endpoints", &api.EndpointSlice{AddressType: "IPv4", Endpoints: []api.Endpoint{}, Ports: []api.EndpointSlicePort{}},
			`{"metadata":{},"addressType":"IPv4","endpoints":null,"ports":null}`},
		{"empty bytes kept", &api.Secret{Data: map[string][]byte{"a": {}}},
			`{"metadata":{},"data":{"a":""}}`},
		{"custom resource as written", &api.CustomObject{Content: map[string]any{"spec": map[string]any{"list": []any{}}}},
			`{"metadata":{},"spec":{"list":[]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dropEmptyCollections(tc.obj)
			got, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestAsStoredCollectionsCopies: the copy compared for a new generation
// leaves the written object as it was.
func TestAsStoredCollectionsCopies(t *testing.T) {
	t.Parallel()
	obj := &api.EndpointSlice{AddressType: "IPv4", Endpoints: []api.Endpoint{}}
	c := asStoredCollections(obj).(*api.EndpointSlice)
	if c.Endpoints != nil {
		t.Errorf("copy: endpoints %#v, want nil", c.Endpoints)
	}
	if obj.Endpoints == nil {
		t.Error("the written object lost its empty endpoints")
	}
}
