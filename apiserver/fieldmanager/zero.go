package fieldmanager

import (
	"encoding/json"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/minik8s/minik8s/api"
)

// zeroObject is the object a write other than an apply is compared with
// when it creates: kube-apiserver's zero-valued typed object of the kind
// as its converter to unstructured content encodes it, not an empty one.
// The difference shows in managedFields: a field present in that zero
// object (every struct field, since encoding/json never omits a struct,
// and every field without omitempty, as null) is not "added" by the
// create, so the creator's entry has no "." for it; kube's shows
// f:spec:{f:replicas:{},...} where an empty live object would give
// f:spec:{".":{},...}. Our types mark kube's always-written structs
// omitzero; here they are written all the same.
func zeroObject(newObj func() api.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	content, _ := zeroValue(reflect.TypeOf(newObj()).Elem()).(map[string]any)
	content["apiVersion"], content["kind"] = gvk.ToAPIVersionAndKind()
	data, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// zeroValue is the JSON value of t's zero value under kube's encoding
// rules described at zeroObject.
func zeroValue(t reflect.Type) any {
	if t.Kind() != reflect.Struct || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		data, err := json.Marshal(reflect.Zero(t).Interface())
		if err != nil {
			return nil
		}
		var v any
		if json.Unmarshal(data, &v) != nil {
			return nil
		}
		return v
	}
	out := map[string]any{}
	addFields(t, out)
	return out
}

// addFields adds to out the fields of struct t, inline ones flattened.
func addFields(t reflect.Type, out map[string]any) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			addFields(f.Type, out)
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		omit := false
		for _, o := range strings.Split(opts, ",") {
			omit = omit || o == "omitempty" || o == "omitzero"
		}
		if f.Type.Kind() == reflect.Struct || !omit {
			out[name] = zeroValue(f.Type)
		}
	}
}
