package validation

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

var (
	quantityType  = reflect.TypeFor[resource.Quantity]()
	timeType      = reflect.TypeFor[api.Time]()
	microTimeType = reflect.TypeFor[api.MicroTime]()
	rawJSONType   = reflect.TypeFor[json.RawMessage]()
)

// semanticEqual is Kubernetes' semantic equality: like reflect.DeepEqual,
// except that quantities compare by value ("1" equals "1000m"), times by
// instant, and a nil slice or map equals an empty one. Immutability and
// "may not change" rules use it so that re-encoding an unchanged object is
// never mistaken for a change; for the same reason raw JSON (the volume
// sources kept as written) compares by the value it encodes, not by its
// bytes (a patch re-encodes it with sorted keys).
func semanticEqual(a, b any) bool {
	return equalValues(reflect.ValueOf(a), reflect.ValueOf(b))
}

func equalValues(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Type() {
	case quantityType:
		return a.Interface().(resource.Quantity).Cmp(b.Interface().(resource.Quantity)) == 0
	case timeType:
		return a.Interface().(api.Time).Equal(b.Interface().(api.Time).Time)
	case microTimeType:
		return a.Interface().(api.MicroTime).Equal(b.Interface().(api.MicroTime).Time)
	case rawJSONType:
		return equalJSON(a.Interface().(json.RawMessage), b.Interface().(json.RawMessage))
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValues(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !equalValues(it.Value(), bv) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !a.Type().Field(i).IsExported() {
				// Unexported state (other than the types handled above)
				// is compared as a whole.
				return reflect.DeepEqual(a.Interface(), b.Interface())
			}
			if !equalValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return a.Interface() == b.Interface()
}

// equalJSON compares two raw JSON documents by the values they encode
// (bytes when either does not decode).
func equalJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var av, bv any
	if json.Unmarshal(a, &av) != nil || json.Unmarshal(b, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}
