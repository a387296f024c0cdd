package registry

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// TestWithResourceVersion checks that splicing a resourceVersion into an
// encoding gives exactly json.Marshal's bytes of the object with that
// resourceVersion, for every kind and for metadata with and without the
// fields around resourceVersion, and that it replaces an existing one.
func TestWithResourceVersion(t *testing.T) {
	grace := int64(30)
	del := api.NewTime(time.Unix(1700000100, 0))
	metas := map[string]api.ObjectMeta{
		"empty":      {},
		"name only":  {Name: "a"},
		"after only": {Generation: 2, Labels: map[string]string{"x": "y"}},
		"full": {Name: "web-0", GenerateName: "web-", Namespace: "default", UID: "1234-5678", Generation: 3,
			CreationTimestamp: api.NewTime(time.Unix(1700000000, 0)), DeletionTimestamp: &del, DeletionGracePeriodSeconds: &grace,
			Labels:      map[string]string{"app": "web", "metadata": `"}{`},
			Annotations: map[string]string{"note": `a "quoted" {value} with \ and <html> & é`},
			Finalizers:  []string{"kubernetes.io/x"}, ManagedFields: []api.ManagedFieldsEntry{{Manager: "kubectl", Operation: api.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: &api.FieldsV1{Raw: []byte(`{"f:a":{}}`)}}}},
		"no uid": {Name: "b", Namespace: "kube-system", Generation: 1},
	}
	for _, info := range api.Resources {
		for mname, meta := range metas {
			t.Run(info.Kind+"/"+mname, func(t *testing.T) {
				obj := info.New()
				tm := obj.GetTypeMeta()
				tm.Kind, tm.APIVersion = info.Kind, info.GroupVersion()
				*obj.GetObjectMeta() = meta
				stored, err := json.Marshal(obj)
				if err != nil {
					t.Fatal(err)
				}
				for _, rv := range []int64{0, 7, 123456789} {
					obj.GetObjectMeta().ResourceVersion = strconv.FormatInt(rv, 10)
					want, _ := json.Marshal(obj)
					got, ok := withResourceVersion(stored, rv)
					if !ok || string(got) != string(want) {
						t.Fatalf("rv %d: got %v %s\nwant %s", rv, ok, got, want)
					}
					// An encoding that already has one gets it replaced.
					again, ok := withResourceVersion(want, rv+1)
					obj.GetObjectMeta().ResourceVersion = strconv.FormatInt(rv+1, 10)
					want2, _ := json.Marshal(obj)
					if !ok || string(again) != string(want2) {
						t.Fatalf("replace rv %d: got %v %s\nwant %s", rv+1, ok, again, want2)
					}
					obj.GetObjectMeta().ResourceVersion = ""
				}
			})
		}
	}
}

// TestWithResourceVersionRefuses checks the shapes it leaves to json.Marshal.
func TestWithResourceVersionRefuses(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `{}`, `{"kind":"Pod"}`, `{"metadata":[]}`, `{"metadata":{"bogus":1}}`,
		`{"metadata":{"name":"a"`, `{"kind":"Pod","metadata":{"name":"a}`, `{"spec":{"a":1}`,
	} {
		if out, ok := withResourceVersion([]byte(in), 5); ok {
			t.Errorf("%q: spliced into %s, want refusal", in, out)
		}
	}
	// Whitespace (not what encoding/json writes, but valid) is handled.
	out, ok := withResourceVersion([]byte(` { "kind" : "Pod" , "metadata" : { "name" : "a" , "generation" : 1 } } `), 5)
	if want := ` { "kind" : "Pod" , "metadata" : { "name" : "a" , "resourceVersion":"5","generation" : 1 } } `; !ok || string(out) != want {
		t.Errorf("got %v %s, want %s", ok, out, want)
	}
}
