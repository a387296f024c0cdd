package api

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/minik8s/minik8s/api/resource"
)

var (
	typeTime        = reflect.TypeFor[Time]()
	typeMicroTime   = reflect.TypeFor[MicroTime]()
	typeQuantity    = reflect.TypeFor[resource.Quantity]()
	typeIntOrString = reflect.TypeFor[IntOrString]()
	typeRawMessage  = reflect.TypeFor[json.RawMessage]()
	typeFieldsV1    = reflect.TypeFor[FieldsV1]()
)

// fill sets every field reachable from v to a non-zero value: one element
// per slice, one entry per map, allocated pointers. Types with custom JSON
// get valid sample values. n varies the values between calls.
func fill(v reflect.Value, n int) {
	switch v.Type() {
	case typeTime:
		v.Set(reflect.ValueOf(NewTime(time.Date(2024, 1, 2, 3, 4, 5+n, 0, time.UTC))))
		return
	case typeMicroTime:
		v.Set(reflect.ValueOf(MicroTime{time.Date(2024, 1, 2, 3, 4, 5, 6000*(n+1), time.UTC)}))
		return
	case typeQuantity:
		v.Set(reflect.ValueOf(*resource.NewMilliQuantity(int64(100+n), resource.DecimalSI)))
		return
	case typeIntOrString:
		v.Set(reflect.ValueOf(FromInt(int32(8080 + n))))
		return
	case typeRawMessage:
		v.Set(reflect.ValueOf(json.RawMessage(`{}`)))
		return
	case typeFieldsV1:
		v.Set(reflect.ValueOf(FieldsV1{Raw: []byte(`{"f:metadata":{"f:name":{}}}`)}))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v" + string(rune('a'+n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n + 1))
	case reflect.Uint8:
		v.SetUint(uint64(n + 1))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), n)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, n)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n+i)
			}
		}
	}
}

// filled returns a *T with every field set.
func filled[T any]() *T {
	p := new(T)
	fill(reflect.ValueOf(p).Elem(), 0)
	return p
}

// clearRaw empties every json.RawMessage reachable from v: Kubernetes fills
// in required members of the sources kept raw, so they cannot round-trip
// byte for byte.
func clearRaw(v reflect.Value) {
	if v.Type() == typeRawMessage {
		v.Set(reflect.Zero(typeRawMessage))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			clearRaw(v.Elem())
		}
	case reflect.Slice:
		if v.Type().Elem() == typeRawMessage {
			// Lists of parts kept raw (a ResourceClaim's requests):
			// Kubernetes fills in their required members too.
			v.Set(reflect.Zero(v.Type()))
			return
		}
		for i := range v.Len() {
			clearRaw(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == typeQuantity || v.Type() == typeTime || v.Type() == typeMicroTime || v.Type() == typeFieldsV1 {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				clearRaw(v.Field(i))
			}
		}
	}
}
