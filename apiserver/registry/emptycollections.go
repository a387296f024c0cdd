package registry

import (
	"reflect"
	"sync"

	"github.com/minik8s/minik8s/api"
)

// kube-apiserver keeps built-in objects in etcd as protobuf, where an
// empty list or map is not told apart from an absent one: the object it
// reads back, and answers a write with (its store decodes what it
// stored), has nil for both. So a list field without omitempty that a
// client wrote as [] (a ClusterRole's "rules: []", as charts write a
// placeholder role) reads back as null. minik8s stores JSON, which keeps
// the difference; dropEmptyCollections makes a built-in object what the
// protobuf round trip makes of it before it is encoded, and before its
// spec is compared with the stored one (kube's semantic equality holds
// an empty list equal to none, so [] over null is no new generation).
//
// Custom resources are JSON in kube-apiserver too and keep what was
// written. Byte strings keep their emptiness (protobuf's bytes fields
// decode to an empty, non-nil slice), and free-form JSON held in an
// interface value (a schema's default, an extension) is not looked into.
func dropEmptyCollections(obj api.Object) {
	if _, custom := obj.(*api.CustomObject); custom {
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	clearEmpty(v.Elem())
}

// asStoredCollections is a copy of obj with its empty collections
// dropped, or obj itself when it holds none to drop.
func asStoredCollections(obj api.Object) api.Object {
	if _, custom := obj.(*api.CustomObject); custom || !holdsCollections(reflect.TypeOf(obj)) {
		return obj
	}
	c := api.DeepCopyObject(obj)
	dropEmptyCollections(c)
	return c
}

// clearEmpty sets every empty slice or map reachable from v through
// exported struct fields, pointers, slices and maps to nil.
func clearEmpty(v reflect.Value) {
	if !holdsCollections(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			clearEmpty(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				clearEmpty(v.Field(i))
			}
		}
	case reflect.Slice:
		switch {
		case v.IsNil():
		case v.Len() == 0:
			if v.CanSet() {
				v.SetZero()
			}
		default:
			for i := range v.Len() {
				clearEmpty(v.Index(i))
			}
		}
	case reflect.Map:
		switch {
		case v.IsNil():
		case v.Len() == 0:
			if v.CanSet() {
				v.SetZero()
			}
		case holdsCollections(v.Type().Elem()):
			// Map values cannot be changed in place: each is copied,
			// cleared and put back.
			iter := v.MapRange()
			for iter.Next() {
				e := reflect.New(v.Type().Elem()).Elem()
				e.Set(iter.Value())
				clearEmpty(e)
				v.SetMapIndex(iter.Key(), e)
			}
		}
	}
}

// collectionTypes remembers, per type, whether a value of it can hold a
// slice or map clearEmpty would clear.
var collectionTypes sync.Map // reflect.Type -> bool

// holdsCollections reports whether a value of type t is, or can reach
// through exported fields, pointers, slices and maps, a slice (other than
// bytes) or map (other than of free-form values).
func holdsCollections(t reflect.Type) bool {
	if v, ok := collectionTypes.Load(t); ok {
		return v.(bool)
	}
	// A recursive type (a schema's properties) meets itself while being
	// looked at: assume it does until the answer is known.
	collectionTypes.Store(t, true)
	var holds bool
	switch t.Kind() {
	case reflect.Pointer:
		holds = holdsCollections(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsCollections(f.Type) {
				holds = true
				break
			}
		}
	case reflect.Slice:
		holds = t.Elem().Kind() != reflect.Uint8
	case reflect.Map:
		holds = t.Elem().Kind() != reflect.Interface
	}
	collectionTypes.Store(t, holds)
	return holds
}
