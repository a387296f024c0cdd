package openapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

const testPrefix = "io.k8s.api.test.v1"

// Small structs exercising the mapping rules.

type scalars struct {
	S    string            `json:"s"`
	I32  int32             `json:"i32"`
	I64  int64             `json:"i64,omitempty"`
	I    int               `json:"i,omitempty"`
	U8   uint8             `json:"u8,omitempty"`
	F    float64           `json:"f,omitempty"`
	F32  float32           `json:"f32,omitempty"`
	B    bool              `json:"b,omitzero"`
	P    *string           `json:"p"`
	PI   *int32            `json:"pi,omitempty"`
	Str  int64             `json:"str,string,omitempty"`
	L    []string          `json:"l,omitempty"`
	M    map[string]string `json:"m,omitempty"`
	MI   map[string]int32  `json:"mi,omitempty"`
	Raw  json.RawMessage   `json:"raw,omitempty"`
	Byt  []byte            `json:"byt,omitempty"`
	Arr  [2]uint8          `json:"arr,omitempty"`
	Any  any               `json:"any,omitempty"`
	Skip string            `json:"-"`
	Dash string            `json:"-,"`
	NoTg string
	priv string
}

type specials struct {
	T  api.Time                     `json:"t,omitzero"`
	PT *api.Time                    `json:"pt,omitempty"`
	MT api.MicroTime                `json:"mt,omitzero"`
	D  api.Duration                 `json:"d"`
	IS api.IntOrString              `json:"is"`
	Q  resource.Quantity            `json:"q"`
	QM map[string]resource.Quantity `json:"qm,omitempty"`
}

type inner struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

type embedder struct {
	api.TypeMeta `json:",inline"`
	inner
	Name  string  `json:"name,omitempty"` // shadows inner.Name
	Items []inner `json:"items,omitempty"`
	Ptr   *inner  `json:"ptr,omitempty"`
	Anon  struct {
		X int32 `json:"x"`
	} `json:"anon"`
}

type recursive struct {
	Children []recursive `json:"children,omitempty"`
	Next     *recursive  `json:"next,omitempty"`
}

type withMeta struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata"`
	Selector       *api.LabelSelector `json:"selector,omitempty"`
	Pods           api.List[inner]    `json:"pods"`
	Conditions     []api.Condition    `json:"conditions,omitempty"`
}

type customJSON struct{}

func (customJSON) MarshalJSON() ([]byte, error) { return []byte("1"), nil }

type badField struct {
	C customJSON `json:"c"`
}

type badMap struct {
	M map[struct{ A int }]string `json:"m"`
}

type badChan struct {
	C chan int `json:"c"`
}

func buildOne(t *testing.T, d dialect, v any, patchFor func(string) patchSchema) (*builder, *schema) {
	t.Helper()
	b := newBuilder(d, patchFor)
	s, err := b.schemaFor(reflect.TypeOf(v), b.root(testPrefix, "Test"))
	if err != nil {
		t.Fatalf("schemaFor(%T): %v", v, err)
	}
	return b, s
}

// def returns the definition s refers to.
func def(t *testing.T, b *builder, s *schema) *schema {
	t.Helper()
	name, ok := strings.CutPrefix(s.Ref, b.d.refPrefix())
	if !ok {
		t.Fatalf("schema %+v is not a $ref", s)
	}
	d := b.defs[name]
	if d == nil {
		t.Fatalf("definition %s missing", name)
	}
	return d
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestScalarMapping(t *testing.T) {
	t.Parallel()
	b, s := buildOne(t, v2, scalars{}, nil)
	if s.Ref != "#/definitions/"+testPrefix+".scalars" {
		t.Fatalf("ref = %q", s.Ref)
	}
	d := def(t, b, s)
	want := map[string]string{
		"s":    `{"type":"string"}`,
		"i32":  `{"format":"int32","type":"integer"}`,
		"i64":  `{"format":"int64","type":"integer"}`,
		"i":    `{"format":"int64","type":"integer"}`,
		"u8":   `{"format":"int32","type":"integer"}`,
		"f":    `{"format":"double","type":"number"}`,
		"f32":  `{"format":"float","type":"number"}`,
		"b":    `{"type":"boolean"}`,
		"p":    `{"type":"string"}`,
		"pi":   `{"format":"int32","type":"integer"}`,
		"str":  `{"type":"string"}`,
		"l":    `{"items":{"type":"string"},"type":"array"}`,
		"m":    `{"additionalProperties":{"type":"string"},"type":"object"}`,
		"mi":   `{"additionalProperties":{"format":"int32","type":"integer"},"type":"object"}`,
		"raw":  `{"type":"object","x-kubernetes-preserve-unknown-fields":true}`,
		"byt":  `{"format":"byte","type":"string"}`,
		"arr":  `{"items":{"format":"int32","type":"integer"},"type":"array"}`,
		"any":  `{"x-kubernetes-preserve-unknown-fields":true}`,
		"-":    `{"type":"string"}`,
		"NoTg": `{"type":"string"}`,
	}
	for name, w := range want {
		if got := jsonOf(t, d.Properties[name]); got != w {
			t.Errorf("%s: got %s, want %s", name, got, w)
		}
	}
	for name := range d.Properties {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected property %q", name)
		}
	}
	// Scalars without omitempty are required; pointers never are.
	if !slices.Equal(d.Required, []string{"-", "NoTg", "i32", "s"}) {
		t.Errorf("required = %v", d.Required)
	}
	if d.Type != "object" {
		t.Errorf("type = %q", d.Type)
	}
}

func TestSpecialTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d     dialect
		field string
		want  string // property schema
		def   string // definition it refers to, if any
	}{
		{v2, "t", `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}`, `"format":"date-time","type":"string"`},
		{v2, "pt", `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}`, `"format":"date-time","type":"string"`},
		{v2, "mt", `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"}`, `"format":"date-time","type":"string"`},
		{v2, "d", `{"type":"string"}`, ""},
		{v2, "is", `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}`, `"format":"int-or-string","type":"string"}`},
		{v3, "is", `{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}`, `"format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}`},
		{v2, "q", `{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}`, `"type":"string"}`},
		{v3, "q", `{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}`, `"oneOf":[{"type":"string"},{"type":"number"}]}`},
		{v2, "qm", `{"additionalProperties":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"},"type":"object"}`, ""},
		{v3, "t", `{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}`, `"format":"date-time","type":"string"`},
	}
	for _, tt := range tests {
		b, s := buildOne(t, tt.d, specials{}, nil)
		p := def(t, b, s).Properties[tt.field]
		if got := jsonOf(t, p); got != tt.want {
			t.Errorf("dialect %d %s: got %s, want %s", tt.d, tt.field, got, tt.want)
		}
		if tt.def != "" {
			if got := jsonOf(t, def(t, b, p)); !strings.Contains(got, tt.def) {
				t.Errorf("dialect %d %s: definition %s lacks %s", tt.d, tt.field, got, tt.def)
			}
		}
	}
	// Only the custom-JSON fields without omitempty that are not scalars:
	// none is required.
	b, s := buildOne(t, v2, specials{}, nil)
	if r := def(t, b, s).Required; len(r) != 0 {
		t.Errorf("required = %v, want none", r)
	}
}

func TestEmbeddingAndNames(t *testing.T) {
	t.Parallel()
	b, s := buildOne(t, v2, embedder{}, nil)
	d := def(t, b, s)
	var names []string
	for n := range d.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	// TypeMeta and inner inline; the outer name shadows inner's.
	if want := []string{"anon", "apiVersion", "items", "kind", "name", "ptr", "value"}; !slices.Equal(names, want) {
		t.Fatalf("properties = %v, want %v", names, want)
	}
	if slices.Contains(d.Required, "name") {
		t.Errorf("the shadowing name has omitempty but is required: %v", d.Required)
	}
	if got := jsonOf(t, d.Properties["items"]); got != `{"items":{"$ref":"#/definitions/`+testPrefix+`.inner"},"type":"array"}` {
		t.Errorf("items = %s", got)
	}
	if got := jsonOf(t, d.Properties["ptr"]); got != `{"$ref":"#/definitions/`+testPrefix+`.inner"}` {
		t.Errorf("ptr = %s", got)
	}
	if got := jsonOf(t, d.Properties["anon"]); got != `{"properties":{"x":{"format":"int32","type":"integer"}},"required":["x"],"type":"object"}` {
		t.Errorf("anon = %s", got)
	}
	if got := b.defs[testPrefix+".inner"].Required; !slices.Equal(got, []string{"name"}) {
		t.Errorf("inner required = %v", got)
	}
}

func TestRecursiveType(t *testing.T) {
	t.Parallel()
	b, s := buildOne(t, v3, recursive{}, nil)
	d := def(t, b, s)
	self := "#/components/schemas/" + testPrefix + ".recursive"
	if d.Properties["next"].Ref != self || d.Properties["children"].Items.Ref != self {
		t.Errorf("recursive refs = %s", jsonOf(t, d))
	}
}

func TestMetaNamesAndLists(t *testing.T) {
	t.Parallel()
	b, s := buildOne(t, v2, withMeta{}, nil)
	d := def(t, b, s)
	for field, want := range map[string]string{
		"metadata": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		"selector": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
		"pods":     "#/definitions/" + testPrefix + ".innerList",
	} {
		if got := d.Properties[field].Ref; got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	if got := d.Properties["conditions"].Items.Ref; got != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Condition" {
		t.Errorf("conditions items = %q", got)
	}
	list := b.defs[testPrefix+".innerList"]
	if list == nil || list.Properties["items"].Items.Ref != "#/definitions/"+testPrefix+".inner" ||
		list.Properties["metadata"].Ref != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta" {
		t.Fatalf("innerList = %s", jsonOf(t, list))
	}
	for _, name := range []string{"ObjectMeta", "OwnerReference", "LabelSelectorRequirement", "Time", "ListMeta", "Condition"} {
		if b.defs[metaPrefix+"."+name] == nil {
			t.Errorf("definition %s.%s missing", metaPrefix, name)
		}
	}
	// Kubernetes requires these and has none required in ObjectMeta.
	for name, want := range map[string][]string{
		"ObjectMeta":               nil,
		"OwnerReference":           {"apiVersion", "kind", "name", "uid"},
		"LabelSelectorRequirement": {"key", "operator"},
		"Condition":                {"status", "type"},
	} {
		if got := b.defs[metaPrefix+"."+name].Required; !slices.Equal(got, want) {
			t.Errorf("%s required = %v, want %v", name, got, want)
		}
	}
}

func TestUnsupportedTypes(t *testing.T) {
	t.Parallel()
	for _, v := range []any{badField{}, badMap{}, badChan{}} {
		b := newBuilder(v2, nil)
		if _, err := b.schemaFor(reflect.TypeOf(v), b.root(testPrefix, "Test")); err == nil {
			t.Errorf("%T: no error", v)
		}
	}
}

// fakePatch answers merge keys from a table of dotted paths.
type fakePatch map[string][2]string

func (f fakePatch) Lookup(path []string) (string, string) {
	v := f[strings.Join(path, ".")]
	return v[0], v[1]
}

type patchPort struct {
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
}

type patchContainer struct {
	Name  string      `json:"name"`
	Ports []patchPort `json:"ports,omitempty"`
	Args  []string    `json:"args,omitempty"`
}

type patchSpec struct {
	Containers []patchContainer `json:"containers"`
	Finalizers []string         `json:"finalizers,omitempty"`
}

type patchKind struct {
	Spec patchSpec `json:"spec"`
}

func TestPatchExtensions(t *testing.T) {
	t.Parallel()
	var asked []string
	fake := fakePatch{
		"spec.containers":       {"name", "merge"},
		"spec.containers.ports": {"containerPort", "merge"},
		"spec.finalizers":       {"", "merge"},
	}
	patchFor := func(kind string) patchSchema {
		asked = append(asked, kind)
		return fake
	}
	b, s := buildOne(t, v3, patchKind{}, patchFor)
	if !slices.Equal(asked, []string{"Test"}) {
		t.Errorf("patch schemas asked for %v", asked)
	}
	spec := def(t, b, def(t, b, s).Properties["spec"])
	tests := []struct {
		name string
		p    *schema
		want string
	}{
		{"containers", spec.Properties["containers"],
			`"x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"`},
		{"ports", def(t, b, spec.Properties["containers"].Items).Properties["ports"],
			`"x-kubernetes-list-map-keys":["containerPort","protocol"],"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"containerPort","x-kubernetes-patch-strategy":"merge"`},
		{"finalizers", spec.Properties["finalizers"], `"x-kubernetes-list-type":"set","x-kubernetes-patch-strategy":"merge"`},
	}
	for _, tt := range tests {
		if got := jsonOf(t, tt.p); !strings.Contains(got, tt.want) {
			t.Errorf("%s = %s, want it to contain %s", tt.name, got, tt.want)
		}
	}
	if got := jsonOf(t, def(t, b, spec.Properties["containers"].Items).Properties["args"]); strings.Contains(got, "x-kubernetes") {
		t.Errorf("args has extensions: %s", got)
	}
}

func TestJSONFieldsDominance(t *testing.T) {
	t.Parallel()
	type A struct {
		X string `json:"x"`
		Y string
	}
	// B repeats A's tag "x"; built with reflect so vet's tag check does not
	// object to what this test is about.
	b := reflect.StructOf([]reflect.StructField{
		{Name: "X", Type: reflect.TypeFor[string](), Tag: `json:"x"`},
		{Name: "Y", Type: reflect.TypeFor[string](), Tag: `json:"Y"`},
	})
	both := reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: reflect.TypeFor[A](), Anonymous: true},
		{Name: "B", Type: b, Anonymous: true},
	})
	var names []string
	for _, f := range jsonFields(both) {
		names = append(names, f.name)
	}
	// x is ambiguous at one depth, both tagged: dropped. Y: only B's is tagged.
	if !slices.Equal(names, []string{"Y"}) {
		t.Errorf("fields = %v, want [Y]", names)
	}
	// encoding/json agrees.
	v := reflect.New(both).Elem()
	v.Field(0).Field(0).SetString("a")
	v.Field(1).Field(1).SetString("b")
	if got := jsonOf(t, v.Interface()); got != `{"Y":"b"}` {
		t.Errorf("encoding/json writes %s", got)
	}
}
