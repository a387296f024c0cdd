package patch

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// canon re-encodes JSON with sorted keys for comparison.
func canon(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber() // keep int64 digits
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON in test %q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestMergePatchRFC7386(t *testing.T) {
	t.Parallel()
	// RFC 7386 appendix A.
	tests := []struct{ original, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`["a","b"]`, `["c","d"]`, `["c","d"]`},
		{`{"a":"b"}`, `["c"]`, `["c"]`},
		{`{"a":"foo"}`, `null`, `null`},
		{`{"a":"foo"}`, `"bar"`, `"bar"`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		{``, `{"a":1}`, `{"a":1}`},
		{`{"n":9223372036854775807}`, `{"m":-9223372036854775808}`, `{"m":-9223372036854775808,"n":9223372036854775807}`},
	}
	for _, tt := range tests {
		got, err := MergePatch([]byte(tt.original), []byte(tt.patch))
		if err != nil {
			t.Errorf("MergePatch(%s, %s): %v", tt.original, tt.patch, err)
			continue
		}
		if string(got) != canon(t, tt.want) {
			t.Errorf("MergePatch(%s, %s) = %s, want %s", tt.original, tt.patch, got, tt.want)
		}
	}
}

func TestInvalidJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func() ([]byte, error)
		want string
	}{
		{"merge bad patch", func() ([]byte, error) { return MergePatch([]byte(`{}`), []byte(`{"a":`)) }, "patch: invalid JSON: unexpected EOF"},
		{"merge bad original", func() ([]byte, error) { return MergePatch([]byte(`{x`), []byte(`{}`)) }, "original object: invalid JSON: "},
		{"merge trailing data", func() ([]byte, error) { return MergePatch([]byte(`{}`), []byte(`{} {}`)) }, "patch: invalid JSON: unexpected data after the top-level value"},
		{"strategic patch not object", func() ([]byte, error) { return StrategicMergePatch([]byte(`{}`), []byte(`[1]`), NoSchema) }, "patch: invalid JSON: must be an object, got array"},
		{"json patch not list", func() ([]byte, error) { return JSONPatch([]byte(`{}`), []byte(`{"op":"add"}`)) }, "patch: invalid JSON: a JSON patch must be a list of operations, got object"},
		{"create merge bad modified", func() ([]byte, error) { return CreateMergePatch([]byte(`{}`), []byte(`nope`)) }, "modified object: invalid JSON: "},
	}
	for _, tt := range tests {
		_, err := tt.fn()
		if !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want ErrInvalidJSON containing %q", tt.name, err, tt.want)
		}
	}
}

func TestCreateMergePatch(t *testing.T) {
	t.Parallel()
	tests := []struct{ original, modified, want string }{
		{`{"a":1,"b":{"c":2,"d":3},"e":[1]}`, `{"a":1,"b":{"c":4},"e":[1,2],"f":"new"}`, `{"b":{"c":4,"d":null},"e":[1,2],"f":"new"}`},
		{`{"a":{"b":1}}`, `{"a":{"b":1}}`, `{}`},
		{`{"a":{"b":1}}`, `{"a":"x"}`, `{"a":"x"}`},
	}
	for _, tt := range tests {
		got, err := CreateMergePatch([]byte(tt.original), []byte(tt.modified))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != canon(t, tt.want) {
			t.Errorf("CreateMergePatch(%s, %s) = %s, want %s", tt.original, tt.modified, got, tt.want)
		}
		applied, err := MergePatch([]byte(tt.original), got)
		if err != nil || string(applied) != canon(t, tt.modified) {
			t.Errorf("applying %s to %s = %s (%v), want %s", got, tt.original, applied, err, tt.modified)
		}
	}
}

func TestThreeWayApply(t *testing.T) {
	t.Parallel()
	// kubectl apply: the manifest dropped label "tier" (it is in the last
	// applied configuration); the live object also has label "owner", set
	// by someone else, and a status.
	lastApplied := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web","tier":"fe"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`
	live := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","uid":"u1","labels":{"app":"web","tier":"fe","owner":"ops"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1","imagePullPolicy":"IfNotPresent"}]}}},"status":{"replicas":2}}`
	want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","uid":"u1","labels":{"app":"web","owner":"ops"}},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1","imagePullPolicy":"IfNotPresent"}]}}},"status":{"replicas":2}}`

	t.Run("strategic", func(t *testing.T) {
		t.Parallel()
		p, err := CreateThreeWayStrategicMergePatch([]byte(lastApplied), []byte(manifest), []byte(live), KubernetesSchema("Deployment"))
		if err != nil {
			t.Fatal(err)
		}
		if got, w := string(p), canon(t, `{"metadata":{"labels":{"tier":null}},"spec":{"replicas":3}}`); got != w {
			t.Errorf("patch = %s, want %s", got, w)
		}
		out, err := StrategicMergePatch([]byte(live), p, KubernetesSchema("Deployment"))
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != canon(t, want) {
			t.Errorf("applied = %s\nwant %s", out, canon(t, want))
		}
	})
	t.Run("merge patch", func(t *testing.T) {
		t.Parallel()
		p, err := CreateThreeWayMergePatch([]byte(lastApplied), []byte(manifest), []byte(live))
		if err != nil {
			t.Fatal(err)
		}
		out, err := MergePatch([]byte(live), p)
		if err != nil {
			t.Fatal(err)
		}
		// A JSON merge patch replaces lists whole: the live containers list
		// differs from the manifest's (imagePullPolicy), so the patch
		// rewrites it and the live-only field goes. This is why kubectl
		// prefers strategic patches for built-in kinds.
		wantMerge := strings.Replace(want, `,"imagePullPolicy":"IfNotPresent"`, "", 1)
		if string(out) != canon(t, wantMerge) {
			t.Errorf("applied = %s\nwant %s", out, canon(t, wantMerge))
		}
		if strings.Contains(string(p), "owner") {
			t.Errorf("patch touches the foreign label: %s", p)
		}
	})
	t.Run("explicit null in manifest is not a deletion", func(t *testing.T) {
		t.Parallel()
		p, err := CreateThreeWayMergePatch([]byte(`{"a":1}`), []byte(`{"a":1,"b":null}`), []byte(`{"a":1,"b":2}`))
		if err != nil {
			t.Fatal(err)
		}
		if string(p) != `{}` {
			t.Errorf("patch = %s, want {}", p)
		}
	})
}

func TestStrategicMergePatch(t *testing.T) {
	t.Parallel()
	pod := KubernetesSchema("Pod")
	tests := []struct {
		name, original, patch, want string
		schema                      Schema
	}{
		{
			name:     "containers merge by name: one image changes, the other stays",
			original: `{"spec":{"containers":[{"name":"web","image":"nginx:1.25","ports":[{"containerPort":80}]},{"name":"log","image":"busybox"}]}}`,
			patch:    `{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}`,
			want:     `{"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80}]},{"name":"log","image":"busybox"}]}}`,
			schema:   pod,
		},
		{
			name:     "$patch delete removes the item",
			original: `{"spec":{"containers":[{"name":"web"},{"name":"log"}]}}`,
			patch:    `{"spec":{"containers":[{"name":"log","$patch":"delete"}]}}`,
			want:     `{"spec":{"containers":[{"name":"web"}]}}`,
			schema:   pod,
		},
		{
			name:     "$patch replace replaces the list",
			original: `{"spec":{"containers":[{"name":"web"},{"name":"log"}]}}`,
			patch:    `{"spec":{"containers":[{"$patch":"replace"},{"name":"new","env":[{"name":"A","value":"1","$patch":"delete"}]}]}}`,
			want:     `{"spec":{"containers":[{"name":"new","env":[]}]}}`,
			schema:   pod,
		},
		{
			name:     "without a schema lists are replaced",
			original: `{"spec":{"containers":[{"name":"web"},{"name":"log"}]}}`,
			patch:    `{"spec":{"containers":[{"name":"web","image":"x"}]}}`,
			want:     `{"spec":{"containers":[{"name":"web","image":"x"}]}}`,
			schema:   NoSchema,
		},
		{
			name:     "unknown field list is replaced, not an error",
			original: `{"data":{"a":"b"},"extra":[1,2]}`,
			patch:    `{"extra":[3]}`,
			want:     `{"data":{"a":"b"},"extra":[3]}`,
			schema:   KubernetesSchema("ConfigMap"),
		},
		{
			name:     "directives in a new subtree do not leak",
			original: `{"metadata":{"name":"p"}}`,
			patch:    `{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"name":"a","env":[{"name":"X","$patch":"delete"}],"$deleteFromPrimitiveList/args":["q"]}],"$retainKeys":["containers"],"x":null}}`,
			want:     `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"a","env":[]}]}}`,
			schema:   pod,
		},
		{
			name:     "replace directive on a new map keeps its content",
			original: `{}`,
			patch:    `{"metadata":{"labels":{"$patch":"replace","a":"1"}}}`,
			want:     `{"metadata":{"labels":{"a":"1"}}}`,
			schema:   pod,
		},
		{
			name:     "delete directive on an absent map is nothing",
			original: `{"metadata":{}}`,
			patch:    `{"metadata":{"labels":{"$patch":"delete"}}}`,
			want:     `{"metadata":{}}`,
			schema:   pod,
		},
		{
			name:     "new item appended to a merge list has its nulls dropped",
			original: `{"spec":{"containers":[{"name":"a"}]}}`,
			patch:    `{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"b","image":null,"$setElementOrder/env":[{"name":"E"}],"env":[{"name":"E"}]}]}}`,
			want:     `{"spec":{"containers":[{"name":"a"},{"name":"b","env":[{"name":"E"}]}]}}`,
			schema:   pod,
		},
		{
			name:     "finalizers union and delete",
			original: `{"metadata":{"finalizers":["kubernetes.io/pvc-protection","foregroundDeletion"]}}`,
			patch:    `{"metadata":{"$deleteFromPrimitiveList/finalizers":["foregroundDeletion"],"finalizers":["example.com/x","kubernetes.io/pvc-protection"]}}`,
			want:     `{"metadata":{"finalizers":["example.com/x","kubernetes.io/pvc-protection"]}}`,
			schema:   pod,
		},
		{
			name:     "null deletes",
			original: `{"spec":{"nodeName":"n1","nodeSelector":{"a":"b"}}}`,
			patch:    `{"spec":{"nodeName":null,"nodeSelector":{"a":null}}}`,
			want:     `{"spec":{"nodeSelector":{}}}`,
			schema:   pod,
		},
		{
			name:     "int64 values survive",
			original: `{"spec":{"activeDeadlineSeconds":9223372036854775807}}`,
			patch:    `{"spec":{"terminationGracePeriodSeconds":9007199254740993,"priority":1.5}}`,
			want:     `{"spec":{"activeDeadlineSeconds":9223372036854775807,"terminationGracePeriodSeconds":9007199254740993,"priority":1.5}}`,
			schema:   pod,
		},
		{
			name:     "deletion list for an absent field is ignored",
			original: `{"metadata":{}}`,
			patch:    `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}}`,
			want:     `{"metadata":{}}`,
			schema:   pod,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := StrategicMergePatch([]byte(tt.original), []byte(tt.patch), tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != canon(t, tt.want) {
				t.Errorf("got  %s\nwant %s", got, canon(t, tt.want))
			}
			if strings.Contains(string(got), `"$`) {
				t.Errorf("a directive leaked: %s", got)
			}
		})
	}
}

func TestStrategicMergePatchErrors(t *testing.T) {
	t.Parallel()
	pod := KubernetesSchema("Pod")
	tests := []struct {
		name, original, patch, want string
		class                       error
	}{
		{"unknown map directive", `{"metadata":{"labels":{}}}`, `{"metadata":{"labels":{"$patch":"nope"}}}`, "unknown patch type: nope", ErrInvalidPatch},
		{"unknown list directive", `{"spec":{"containers":[{"name":"a"}]}}`, `{"spec":{"containers":[{"name":"a","$patch":"nope"}]}}`, "unknown patch type: nope", ErrInvalidPatch},
		{"merge directive in list", `{"spec":{"containers":[{"name":"a"}]}}`, `{"spec":{"containers":[{"$patch":"merge"}]}}`, "merging lists cannot yet be specified in the patch", ErrInvalidPatch},
		{"missing merge key", `{"spec":{"containers":[{"name":"a"}]}}`, `{"spec":{"containers":[{"image":"x"}]}}`, "does not contain declared merge key: name", ErrInvalidPatch},
		{"delete without merge key", `{"spec":{"containers":[{"name":"a"}]}}`, `{"spec":{"containers":[{"$patch":"delete"}]}}`, "does not contain declared merge key: name", ErrInvalidPatch},
		{"retainKeys not a list", `{"spec":{"strategy":{}}}`, `{"spec":{"strategy":{"$retainKeys":"type"}}}`, "invalid patch format of retainKeys", ErrInvalidPatch},
		{"retainKeys misses a field", `{"spec":{"strategy":{}}}`, `{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{}}}}`, `field "rollingUpdate" is set but not in $retainKeys`, ErrInvalidPatch},
		{"setElementOrder not a list", `{"metadata":{}}`, `{"metadata":{"$setElementOrder/finalizers":"a"}}`, "invalid patch format of setElementOrder list", ErrInvalidPatch},
		{"setElementOrder disagrees with patch", `{"metadata":{"finalizers":["a"]}}`, `{"metadata":{"$setElementOrder/finalizers":["b","c"],"finalizers":["c","b"]}}`, "doesn't match the $setElementOrder list", ErrInvalidPatch},
		{"bad deletion directive key", `{}`, `{"$deleteFromPrimitiveList":["a"]}`, "invalid patch format of primitive list", ErrInvalidPatch},
		{"mixed list types", `{"metadata":{"finalizers":["a"]}}`, `{"metadata":{"finalizers":[1]}}`, "list element types are not identical", ErrCannotApply},
		{"list of lists", `{"metadata":{"finalizers":[["a"]]}}`, `{"metadata":{"finalizers":[["b"]]}}`, "lists of lists are not supported", ErrCannotApply},
		{"merge list of objects without key", `{"metadata":{"finalizers":[{"a":1}]}}`, `{"metadata":{"finalizers":[{"a":2}]}}`, "cannot merge lists without merge key for metadata.finalizers", ErrInvalidPatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := StrategicMergePatch([]byte(tt.original), []byte(tt.patch), pod)
			if err == nil || !errors.Is(err, tt.class) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %v containing %q", err, tt.class, tt.want)
			}
		})
	}
}

// TestTwoWayRoundTrip checks apply(original, diff(original, modified)) ==
// modified for strategic patches, list order included.
func TestTwoWayRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range diffCases {
		for _, pair := range [][2]string{{tc.original, tc.modified}, {tc.current, tc.modified}, {tc.modified, tc.current}} {
			schema := KubernetesSchema(tc.kind)
			p, err := CreateStrategicMergePatch([]byte(pair[0]), []byte(pair[1]), schema)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got, err := StrategicMergePatch([]byte(pair[0]), p, schema)
			if err != nil {
				t.Fatalf("%s: apply %s: %v", tc.name, p, err)
			}
			if string(got) != canon(t, pair[1]) {
				t.Errorf("%s: apply(%s, %s)\n got  %s\n want %s", tc.name, pair[0], p, got, canon(t, pair[1]))
			}
		}
	}
}

func TestJSONPatch(t *testing.T) {
	t.Parallel()
	// Mostly RFC 6902 appendix A.
	tests := []struct{ name, doc, patch, want string }{
		{"add member", `{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`, `{"baz":"qux","foo":"bar"}`},
		{"add array element", `{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`, `{"foo":["bar","qux","baz"]}`},
		{"remove member", `{"baz":"qux","foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`, `{"foo":"bar"}`},
		{"remove element", `{"foo":["bar","qux","baz"]}`, `[{"op":"remove","path":"/foo/1"}]`, `{"foo":["bar","baz"]}`},
		{"replace", `{"baz":"qux","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`, `{"baz":"boo","foo":"bar"}`},
		{"move member", `{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}`, `[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]`, `{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}`},
		{"move element", `{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`, `{"foo":["all","cows","eat","grass"]}`},
		{"test ok", `{"baz":"qux","foo":["a",2,"c"]}`, `[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]`, `{"baz":"qux","foo":["a",2,"c"]}`},
		{"add nested object", `{"foo":"bar"}`, `[{"op":"add","path":"/child","value":{"grandchild":{}}}]`, `{"foo":"bar","child":{"grandchild":{}}}`},
		{"ignore unknown members", `{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux","xyz":123}]`, `{"foo":"bar","baz":"qux"}`},
		{"escaped keys", `{"/":9,"~1":10}`, `[{"op":"test","path":"/~01","value":10},{"op":"add","path":"/a~1b","value":1}]`, `{"/":9,"~1":10,"a/b":1}`},
		{"add to array end", `{"foo":["bar"]}`, `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`, `{"foo":["bar",["abc","def"]]}`},
		{"copy is deep", `{"a":{"b":1}}`, `[{"op":"copy","from":"/a","path":"/c"},{"op":"replace","path":"/c/b","value":2}]`, `{"a":{"b":1},"c":{"b":2}}`},
		{"replace whole doc", `{"a":1}`, `[{"op":"replace","path":"","value":{"b":2}}]`, `{"b":2}`},
		{"numbers equal by value", `{"n":1}`, `[{"op":"test","path":"/n","value":1.0}]`, `{"n":1}`},
		{"int64 replicas", `{"spec":{"replicas":1}}`, `[{"op":"replace","path":"/spec/replicas","value":9223372036854775807}]`, `{"spec":{"replicas":9223372036854775807}}`},
		{"add null value", `{}`, `[{"op":"add","path":"/a","value":null}]`, `{"a":null}`},
		{"move to same path", `{"a":1}`, `[{"op":"move","from":"/a","path":"/a"}]`, `{"a":1}`},
		// evanphx/json-patch v4, kube-apiserver's, adds a missing member.
		{"replace missing member", `{"a":1}`, `[{"op":"replace","path":"/b","value":2}]`, `{"a":1,"b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := JSONPatch([]byte(tt.doc), []byte(tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != canon(t, tt.want) {
				t.Errorf("got %s, want %s", got, canon(t, tt.want))
			}
		})
	}
}

func TestJSONPatchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, patch, want string
		class                  error
	}{
		{"test fails", `{"spec":{"replicas":2}}`, `[{"op":"test","path":"/spec/replicas","value":3}]`, "operation 0: the test operation failed at /spec/replicas", ErrCannotApply},
		{"test missing path", `{}`, `[{"op":"test","path":"/a","value":null}]`, "the test operation failed at /a", ErrCannotApply},
		{"failed op undoes nothing visible", `{"a":1}`, `[{"op":"add","path":"/b","value":2},{"op":"test","path":"/a","value":2}]`, "operation 1: the test operation failed at /a", ErrCannotApply},
		{"remove missing", `{"a":1}`, `[{"op":"remove","path":"/b"}]`, "the remove operation failed: the path /b does not exist", ErrCannotApply},
		{"replace missing parent", `{"a":1}`, `[{"op":"replace","path":"/b/c","value":1}]`, "the replace operation failed: the path /b/c does not exist", ErrCannotApply},
		{"replace missing element", `{"a":[1]}`, `[{"op":"replace","path":"/a/1","value":1}]`, "the replace operation failed: the path /a/1 does not exist", ErrCannotApply},
		{"add missing parent", `{}`, `[{"op":"add","path":"/a/b","value":1}]`, "the add operation failed: the parent of /a/b does not exist", ErrCannotApply},
		{"add out of range", `{"a":[1]}`, `[{"op":"add","path":"/a/2","value":1}]`, "index 2 is out of range (array length 1)", ErrCannotApply},
		{"add leading zero", `{"a":[1]}`, `[{"op":"add","path":"/a/01","value":1}]`, `"01" is not an array index`, ErrCannotApply},
		{"remove dash", `{"a":[1]}`, `[{"op":"remove","path":"/a/-"}]`, "the path /a/- does not exist", ErrCannotApply},
		{"move into child", `{"a":{"b":1}}`, `[{"op":"move","from":"/a","path":"/a/b/c"}]`, "cannot be moved into its own child", ErrCannotApply},
		{"add to scalar parent", `{"a":1}`, `[{"op":"add","path":"/a/b","value":1}]`, "the parent of /a/b is a number", ErrCannotApply},
		{"unknown op", `{}`, `[{"op":"frobnicate","path":"/a"}]`, `operation 0: unknown op "frobnicate"`, ErrInvalidPatch},
		{"missing op", `{}`, `[{"path":"/a"}]`, "operation 0: missing op", ErrInvalidPatch},
		{"missing value", `{}`, `[{"op":"add","path":"/a"}]`, "operation 0 (add): missing value", ErrInvalidPatch},
		{"missing path", `{}`, `[{"op":"remove"}]`, "operation 0 (remove): missing path", ErrInvalidPatch},
		{"missing from", `{}`, `[{"op":"copy","path":"/a"}]`, "operation 0 (copy): missing from", ErrInvalidPatch},
		{"bad pointer", `{}`, `[{"op":"add","path":"a","value":1}]`, "must be empty or start with '/'", ErrInvalidPatch},
		{"bad escape", `{}`, `[{"op":"add","path":"/a~2","value":1}]`, "'~' must be followed by '0' or '1'", ErrInvalidPatch},
		{"operation not object", `{}`, `[1]`, "operation 0: must be an object, got number", ErrInvalidPatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := JSONPatch([]byte(tt.doc), []byte(tt.patch))
			if err == nil || !errors.Is(err, tt.class) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %v containing %q", err, tt.class, tt.want)
			}
		})
	}
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"","value":{}},`, MaxJSONPatchOperations+1), ",") + "]"
	if _, err := JSONPatch([]byte(`{}`), []byte(many)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too many operations: %v", err)
	}
}

func TestKubernetesSchemaLookups(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind          string
		path          string
		key, strategy string
	}{
		{"Pod", "spec.containers", "name", "merge"},
		{"Pod", "spec.containers.ports", "containerPort", "merge"},
		{"Pod", "spec.volumes", "name", "merge,retainKeys"},
		{"Deployment", "spec.template.spec.initContainers.env", "name", "merge"},
		{"Deployment", "spec.strategy", "", "retainKeys"},
		{"Node", "spec.taints", "", ""},
		{"Node", "status.addresses", "type", "merge"},
		{"Endpoints", "subsets", "", ""},
		{"Service", "spec.ports", "port", "merge"},
		{"Lease", "metadata.finalizers", "", "merge"},
		{"Widget", "metadata.ownerReferences", "uid", "merge"},
		{"Widget", "spec.containers", "", ""},
	}
	for _, tt := range tests {
		k, s := KubernetesSchema(tt.kind).Lookup(strings.Split(tt.path, "."))
		if k != tt.key || s != tt.strategy {
			t.Errorf("%s %s = %q,%q want %q,%q", tt.kind, tt.path, k, s, tt.key, tt.strategy)
		}
	}
}

func TestPrimitiveListOrder(t *testing.T) {
	t.Parallel()
	pod := KubernetesSchema("Pod")
	tests := []struct{ original, modified, want string }{
		{`{"metadata":{"finalizers":["b","a"]}}`, `{"metadata":{"finalizers":["b","a"]}}`, `{}`},
		{`{"metadata":{"finalizers":["b","a"]}}`, `{"metadata":{"finalizers":["a","b"]}}`, `{"metadata":{"$setElementOrder/finalizers":["a","b"]}}`},
		{`{"metadata":{"finalizers":["a"]}}`, `{"metadata":{"finalizers":["b","a"]}}`, `{"metadata":{"$setElementOrder/finalizers":["b","a"],"finalizers":["b"]}}`},
		{`{"metadata":{"finalizers":["a","b"]}}`, `{"metadata":{"finalizers":["b"]}}`, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"$setElementOrder/finalizers":["b"]}}`},
	}
	for _, tt := range tests {
		p, err := CreateStrategicMergePatch([]byte(tt.original), []byte(tt.modified), pod)
		if err != nil {
			t.Fatal(err)
		}
		if string(p) != canon(t, tt.want) {
			t.Errorf("diff(%s, %s) = %s, want %s", tt.original, tt.modified, p, tt.want)
		}
		got, err := StrategicMergePatch([]byte(tt.original), p, pod)
		if err != nil || string(got) != canon(t, tt.modified) {
			t.Errorf("apply = %s, %v; want %s", got, err, tt.modified)
		}
	}
}

func TestApplyByType(t *testing.T) {
	t.Parallel()
	orig := []byte(`{"metadata":{"finalizers":["a"]},"spec":{"replicas":1}}`)
	tests := []struct {
		typ   Type
		patch string
		want  string
		class error
	}{
		{JSONPatchType, `[{"op":"replace","path":"/spec/replicas","value":2}]`, `{"metadata":{"finalizers":["a"]},"spec":{"replicas":2}}`, nil},
		{MergePatchType, `{"metadata":{"finalizers":["b"]}}`, `{"metadata":{"finalizers":["b"]},"spec":{"replicas":1}}`, nil},
		{StrategicMergePatchType, `{"metadata":{"finalizers":["b"]}}`, `{"metadata":{"finalizers":["b","a"]},"spec":{"replicas":1}}`, nil},
		{ApplyPatchType, `{}`, "", ErrUnsupportedType},
		{Type("text/plain"), `{}`, "", ErrUnsupportedType},
	}
	for _, tt := range tests {
		got, err := Apply(tt.typ, orig, []byte(tt.patch), KubernetesSchema("Deployment"))
		if tt.class != nil {
			if !errors.Is(err, tt.class) {
				t.Errorf("%s: error %v, want %v", tt.typ, err, tt.class)
			}
			continue
		}
		if err != nil || string(got) != canon(t, tt.want) {
			t.Errorf("%s: %s, %v; want %s", tt.typ, got, err, tt.want)
		}
	}
}

// doublingCopies is the patch of issue 26: a short array, then n copies of
// it into itself, each doubling its size (22 of them, a 1 KB patch, build
// about 100 MB).
func doublingCopies(n int) string {
	ops := []string{`{"op":"add","path":"/x","value":["aaaaaaaaaaaaaaaaaaaa"]}`}
	for range n {
		ops = append(ops, `{"op":"copy","from":"/x","path":"/x/-"}`)
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// TestJSONPatchCopyAmplification checks that the doubling copies are
// refused once they have copied MaxJSONPatchCopyBytes, as kube-apiserver
// refuses them, before the document grows: the whole refusal allocates a
// few times the limit, not the hundred megabytes the patch asks for. It is
// not parallel, so that the allocations it counts are its own.
func TestJSONPatchCopyAmplification(t *testing.T) {
	p := doublingCopies(22)
	if len(p) > 1024 {
		t.Fatalf("the patch is %d bytes, want at most 1 KB", len(p))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := JSONPatch([]byte(`{"metadata":{"name":"a"}}`), []byte(p))
	runtime.ReadMemStats(&after)
	// The array encodes in 24 bytes, then 2n+1: the copies add 24, 49, 99,
	// ... and the 17th (operation 17) takes the sum past 3 MiB.
	want := "operation 17: Unable to complete the copy, the accumulated size increase of copy is 3276758, exceeding the limit 3145728"
	if !errors.Is(err, ErrCannotApply) || err.Error() != want {
		t.Fatalf("error %v, want %q (%v)", err, want, ErrCannotApply)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*MaxJSONPatchCopyBytes {
		t.Errorf("refusing the patch allocated %d MiB", alloc>>20)
	}
	// Fewer doublings stay under the limit and apply.
	out, err := JSONPatch([]byte(`{}`), []byte(doublingCopies(3)))
	if err != nil {
		t.Fatal(err)
	}
	a := `"aaaaaaaaaaaaaaaaaaaa"`
	x1 := "[" + a + "," + "[" + a + "]]"
	x2 := "[" + a + "," + "[" + a + "]," + x1 + "]"
	x3 := "[" + a + "," + "[" + a + "]," + x1 + "," + x2 + "]"
	if want := `{"x":` + x3 + `}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

// TestJSONPatchLimits checks the bounds of the two limits: copies adding
// exactly MaxJSONPatchCopyBytes apply and one byte more does not, counted
// over the whole patch and not per operation (a move copies nothing); a
// patch of exactly MaxJSONPatchOperations operations applies and one more
// is too large, in kube-apiserver's words.
func TestJSONPatchLimits(t *testing.T) {
	t.Parallel()
	// A string of n bytes encodes in n+2.
	half := strings.Repeat("s", MaxJSONPatchCopyBytes/2-2)
	doc := `{"a":"` + half + `","b":"` + half + `"}`
	for _, tc := range []struct {
		name, patch string
		err         string
	}{
		{"copies up to the limit", `[{"op":"copy","from":"/a","path":"/c"},{"op":"move","from":"/c","path":"/d"},{"op":"copy","from":"/b","path":"/e"}]`, ""},
		{"a byte past the limit", `[{"op":"copy","from":"/a","path":"/c"},{"op":"add","path":"/b","value":"s` + half + `"},{"op":"copy","from":"/b","path":"/e"}]`,
			"operation 2: Unable to complete the copy, the accumulated size increase of copy is 3145729, exceeding the limit 3145728"},
		{"a removed copy still counts", `[{"op":"copy","from":"/a","path":"/c"},{"op":"remove","path":"/c"},{"op":"copy","from":"/b","path":"/c"},{"op":"add","path":"/n","value":1},{"op":"copy","from":"/n","path":"/m"}]`,
			"operation 4: Unable to complete the copy, the accumulated size increase of copy is 3145729, exceeding the limit 3145728"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := JSONPatch([]byte(doc), []byte(tc.patch))
			if tc.err == "" && err != nil || tc.err != "" && (!errors.Is(err, ErrCannotApply) || err.Error() != tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}

	ops := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/a","value":1},`, n), ",") + "]")
	}
	if _, err := JSONPatch([]byte(`{"a":1}`), ops(MaxJSONPatchOperations)); err != nil {
		t.Errorf("%d operations: %v", MaxJSONPatchOperations, err)
	}
	_, err := JSONPatch([]byte(`{"a":1}`), ops(MaxJSONPatchOperations+1))
	if want := "The allowed maximum operations in a JSON patch is 10000, got 10001"; !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Errorf("%d operations: %v, want %q", MaxJSONPatchOperations+1, err, want)
	}
}
