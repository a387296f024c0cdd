package api

import (
	"reflect"
	"sync"
)

// DeepCopy returns a copy of *in that shares no mutable memory with it:
// every pointer, slice and map reachable through exported fields is
// duplicated. Clients must never modify objects they got from a cache or
// informer; they copy first, so this is on hot paths.
//
// The copy is reflection-based with a per-type plan computed once (not a
// JSON round trip, which would be several times slower and would also
// normalise times to seconds). Structs with unexported fields, such as
// Time and resource.Quantity, are copied as values: they are immutable by
// contract (a Quantity never modifies the big.Int it shares).
func DeepCopy[T any](in *T) *T {
	if in == nil {
		return nil
	}
	out := new(T)
	*out = *in
	if c := copierFor(reflect.TypeFor[T]()); c != nil {
		c(reflect.ValueOf(out).Elem(), reflect.ValueOf(in).Elem())
	}
	return out
}

// DeepCopyObject deep-copies any API object (a pointer to a kind struct);
// see DeepCopy. A nil object gives nil.
func DeepCopyObject(obj Object) Object {
	v := reflect.ValueOf(obj)
	if obj == nil || v.IsNil() {
		return nil
	}
	n := reflect.New(v.Type().Elem())
	n.Elem().Set(v.Elem())
	if c := copierFor(v.Type().Elem()); c != nil {
		c(n.Elem(), v.Elem())
	}
	return n.Interface().(Object)
}

// copier replaces, in dst, every shared reference with a copy; dst already
// holds a shallow copy of src. A nil copier means a shallow copy suffices.
type copier func(dst, src reflect.Value)

var (
	copierMu    sync.Mutex
	copierCache sync.Map // reflect.Type -> *copierEntry
)

type copierEntry struct{ c copier }

func copierFor(t reflect.Type) copier {
	if e, ok := copierCache.Load(t); ok {
		return e.(*copierEntry).c
	}
	copierMu.Lock()
	defer copierMu.Unlock()
	return buildCopier(t, map[reflect.Type]*copierEntry{})
}

// buildCopier compiles the plan for t; building maps types under
// construction so recursive types resolve through their entry at run time.
func buildCopier(t reflect.Type, building map[reflect.Type]*copierEntry) copier {
	if e, ok := copierCache.Load(t); ok {
		return e.(*copierEntry).c
	}
	if e, ok := building[t]; ok {
		return func(dst, src reflect.Value) {
			if e.c != nil {
				e.c(dst, src)
			}
		}
	}
	entry := &copierEntry{}
	building[t] = entry
	entry.c = compileCopier(t, building)
	copierCache.Store(t, entry)
	return entry.c
}

func compileCopier(t reflect.Type, building map[reflect.Type]*copierEntry) copier {
	switch t.Kind() {
	case reflect.Pointer:
		elem := t.Elem()
		ec := buildCopier(elem, building)
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := reflect.New(elem)
			n.Elem().Set(src.Elem())
			if ec != nil {
				ec(n.Elem(), src.Elem())
			}
			dst.Set(n)
		}
	case reflect.Slice:
		ec := buildCopier(t.Elem(), building)
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := reflect.MakeSlice(t, src.Len(), src.Len())
			reflect.Copy(n, src)
			if ec != nil {
				for i := range src.Len() {
					ec(n.Index(i), src.Index(i))
				}
			}
			dst.Set(n)
		}
	case reflect.Map:
		elem := t.Elem()
		ec := buildCopier(elem, building)
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			n := reflect.MakeMapWithSize(t, src.Len())
			it := src.MapRange()
			for it.Next() {
				v := it.Value()
				if ec != nil {
					c := reflect.New(elem).Elem()
					c.Set(v)
					ec(c, v)
					v = c
				}
				n.SetMapIndex(it.Key(), v)
			}
			dst.Set(n)
		}
	case reflect.Array:
		ec := buildCopier(t.Elem(), building)
		if ec == nil {
			return nil
		}
		return func(dst, src reflect.Value) {
			for i := range src.Len() {
				ec(dst.Index(i), src.Index(i))
			}
		}
	case reflect.Interface:
		return func(dst, src reflect.Value) {
			if src.IsNil() {
				return
			}
			inner := src.Elem()
			c := copierFor(inner.Type())
			if c == nil {
				return
			}
			n := reflect.New(inner.Type()).Elem()
			n.Set(inner)
			c(n, inner)
			dst.Set(n)
		}
	case reflect.Struct:
		type fieldCopier struct {
			i int
			c copier
		}
		var fields []fieldCopier
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				// Unexported state marks an immutable value type.
				return nil
			}
		}
		for i := range t.NumField() {
			if c := buildCopier(t.Field(i).Type, building); c != nil {
				fields = append(fields, fieldCopier{i, c})
			}
		}
		if len(fields) == 0 {
			return nil
		}
		return func(dst, src reflect.Value) {
			for _, f := range fields {
				f.c(dst.Field(f.i), src.Field(f.i))
			}
		}
	}
	// Booleans, numbers and strings are values; functions and channels are
	// shared by design.
	return nil
}
