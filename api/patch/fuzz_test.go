package patch

import (
	"encoding/json"
	"testing"
)

func hasDirectiveKey(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if isDirectiveKey(k) || hasDirectiveKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasDirectiveKey(e) {
				return true
			}
		}
	}
	return false
}

// The fuzz tests run their seed corpus in a normal `go test`; run
// `go test -fuzz FuzzStrategicMergePatch ./api/patch` to explore.

var fuzzDocs = []string{
	`{}`, `{"a":1}`, `[]`, `null`, `"s"`,
	`{"metadata":{"labels":{"a":"b"},"finalizers":["x","y"]},"spec":{"containers":[{"name":"a","image":"i","env":[{"name":"E","value":"1"}]},{"name":"b"}]}}`,
	`{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80}]}],"volumes":[{"name":"v","emptyDir":{}}]}}`,
}

var fuzzPatches = []string{
	`{}`, `{"a":null}`, `[1]`, `{"$patch":"replace"}`, `{"$patch":"delete"}`, `{"$patch":1}`,
	`{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}`,
	`{"spec":{"containers":[{"$patch":"replace"},{"name":"z"}]}}`,
	`{"spec":{"containers":[{"name":{"x":1}}]}}`,
	`{"spec":{"containers":[{"name":["x"]},{"name":["x"],"$patch":"delete"}]}}`,
	`{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"a","image":"j"}]}}`,
	`{"spec":{"$setElementOrder/containers":[1,"a"],"containers":[{"name":"a"}]}}`,
	`{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":"x"}}`,
	`{"metadata":{"$deleteFromPrimitiveList/finalizers":["x",{}],"finalizers":["z"]}}`,
	`{"metadata":{"$setElementOrder/finalizers":[{"a":1}],"finalizers":[[1]]}}`,
	`{"spec":{"volumes":[{"name":"v","$retainKeys":["name",1],"configMap":{}}]}}`,
	`{"spec":{"volumes":[{"name":"v","$retainKeys":"x"}]}}`,
	`{"$deleteFromPrimitiveList/":[1],"$setElementOrder/":[2],"$retainKeys":[]}`,
	`{"metadata":{"finalizers":[null,1.5,true]}}`,
}

func FuzzMergePatch(f *testing.F) {
	for _, d := range fuzzDocs {
		for _, p := range fuzzPatches {
			f.Add(d, p)
		}
	}
	f.Fuzz(func(t *testing.T, doc, p string) {
		out, err := MergePatch([]byte(doc), []byte(p))
		if err == nil && !json.Valid(out) {
			t.Fatalf("MergePatch(%q, %q) gave invalid JSON %q", doc, p, out)
		}
		if _, err := CreateMergePatch([]byte(doc), []byte(p)); err == nil {
			if _, err := CreateThreeWayMergePatch([]byte(doc), []byte(p), []byte(doc)); err != nil {
				t.Fatalf("three-way failed where two-way worked: %v", err)
			}
		}
	})
}

func FuzzStrategicMergePatch(f *testing.F) {
	for _, d := range fuzzDocs {
		for _, p := range fuzzPatches {
			f.Add(d, p)
		}
	}
	schema := KubernetesSchema("Pod")
	f.Fuzz(func(t *testing.T, doc, p string) {
		out, err := StrategicMergePatch([]byte(doc), []byte(p), schema)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %q", out)
		}
		if v, err := decode("doc", []byte(doc)); err == nil && !hasDirectiveKey(v) {
			res, err := decode("result", out)
			if err != nil {
				t.Fatal(err)
			}
			if hasDirectiveKey(res) {
				t.Fatalf("a directive leaked: StrategicMergePatch(%q, %q) = %s", doc, p, out)
			}
		}
		// Diffing never panics either, and a two-way patch re-applies.
		two, err := CreateStrategicMergePatch([]byte(doc), out, schema)
		if err != nil {
			return
		}
		if _, err := CreateThreeWayStrategicMergePatch([]byte(doc), out, []byte(doc), schema); err != nil {
			return
		}
		if _, err := StrategicMergePatch([]byte(doc), two, schema); err != nil {
			return
		}
	})
}

func FuzzJSONPatch(f *testing.F) {
	seeds := []string{
		`[{"op":"add","path":"/a","value":1}]`, `[{"op":"remove","path":"/spec/containers/0"}]`,
		`[{"op":"move","from":"/a","path":"/b/c"}]`, `[{"op":"copy","from":"","path":"/x"}]`,
		`[{"op":"replace","path":"","value":[]}]`, `[{"op":"add","path":"/spec/containers/-","value":{}}]`,
		`[{"op":"test","path":"/metadata/finalizers/1","value":"y"}]`, `[{"op":"move","from":"/spec","path":""}]`,
		`[{"op":"add","path":"/-","value":1}]`, `[{"op":"remove","path":""}]`,
	}
	for _, d := range fuzzDocs {
		for _, p := range seeds {
			f.Add(d, p)
		}
	}
	f.Fuzz(func(t *testing.T, doc, p string) {
		out, err := JSONPatch([]byte(doc), []byte(p))
		if err == nil && !json.Valid(out) {
			t.Fatalf("JSONPatch(%q, %q) gave invalid JSON %q", doc, p, out)
		}
	})
}
