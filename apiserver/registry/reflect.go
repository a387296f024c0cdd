package registry

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/minik8s/minik8s/api"
)

// The generic rules (status subresource, generation) need to tell an
// object's metadata, spec and status apart without knowing its kind; every
// kind is a struct embedding TypeMeta and ObjectMeta, with an optional
// field named Status, and everything else is its "spec".

func structOf(obj api.Object) reflect.Value { return reflect.ValueOf(obj).Elem() }

func hasStatus(obj api.Object) bool {
	return structOf(obj).FieldByName("Status").IsValid()
}

// resetStatus zeroes the status of obj, if it has one.
func resetStatus(obj api.Object) {
	if f := structOf(obj).FieldByName("Status"); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// copyStatus sets dst's status to src's.
func copyStatus(dst, src api.Object) {
	d := structOf(dst).FieldByName("Status")
	s := structOf(src).FieldByName("Status")
	if d.IsValid() && s.IsValid() {
		d.Set(s)
	}
}

// copySpec sets dst's "spec" (every field but metadata and status) to src's.
func copySpec(dst, src api.Object) {
	d, s := structOf(dst), structOf(src)
	for i := 0; i < d.NumField(); i++ {
		if !isMetaOrStatus(d.Type().Field(i)) {
			d.Field(i).Set(s.Field(i))
		}
	}
}

func isMetaOrStatus(f reflect.StructField) bool {
	return f.Name == "TypeMeta" || f.Name == "ObjectMeta" || f.Name == "Status"
}

// specEqual reports whether a and b agree on everything but metadata and
// status, comparing encodings so equal quantities written differently agree.
func specEqual(a, b api.Object) bool {
	va, vb := structOf(a), structOf(b)
	for i := 0; i < va.NumField(); i++ {
		if isMetaOrStatus(va.Type().Field(i)) {
			continue
		}
		if !sameEncoding(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// sameEncoding reports whether a and b encode to the same JSON value.
func sameEncoding(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	return bytes.Equal(ja, jb) || sameJSONValue(ja, jb)
}

// sameJSONValue: two encodings of the same value, as raw JSON kept as
// written (an unmodelled volume source) is after a patch re-encodes it
// with its keys sorted.
func sameJSONValue(a, b []byte) bool {
	var av, bv any
	if json.Unmarshal(a, &av) != nil || json.Unmarshal(b, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}
