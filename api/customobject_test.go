package api

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestCustomObjectRoundTrip(t *testing.T) {
	t.Parallel()
	in := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","labels":{"a":"b"}},` +
		`"spec":{"big":9007199254740993,"f":1.5,"list":[1,"x",null,{"n":2}]},"status":{"replicas":3}}`
	var o CustomObject
	if err := json.Unmarshal([]byte(in), &o); err != nil {
		t.Fatal(err)
	}
	if o.APIVersion != "example.com/v1" || o.Kind != "Widget" || o.Name != "w" || o.Labels["a"] != "b" {
		t.Errorf("type and metadata: %+v", o)
	}
	spec := o.Content["spec"].(map[string]any)
	if spec["big"] != int64(9007199254740993) || spec["f"] != 1.5 || spec["list"].([]any)[3].(map[string]any)["n"] != int64(2) {
		t.Errorf("numbers: %#v", spec)
	}
	if o.Status.(map[string]any)["replicas"] != int64(3) {
		t.Errorf("status: %#v", o.Status)
	}
	out, err := json.Marshal(&o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","labels":{"a":"b"}},` +
		`"spec":{"big":9007199254740993,"f":1.5,"list":[1,"x",null,{"n":2}]},"status":{"replicas":3}}`
	if string(out) != want {
		t.Errorf("encoded\n%s\nwant\n%s", out, want)
	}
	m, err := o.Object()
	if err != nil {
		t.Fatal(err)
	}
	var back CustomObject
	if err := back.SetObject(m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, o) {
		t.Errorf("Object/SetObject: %#v, want %#v", back, o)
	}
	cp := DeepCopyObject(&o).(*CustomObject)
	cp.Content["spec"].(map[string]any)["f"] = 2.5
	if spec["f"] != 1.5 {
		t.Error("a deep copy shares the content")
	}
	for _, bad := range []string{`null`, `{"kind":3}`, `{"metadata":[]}`, `[1]`} {
		if err := json.Unmarshal([]byte(bad), &CustomObject{}); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
