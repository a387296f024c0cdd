package registry

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// metaFieldOrder is the position of each JSON key of ObjectMeta in the
// order encoding/json writes them (the struct's field order).
var metaFieldOrder = func() map[string]int {
	t := reflect.TypeFor[api.ObjectMeta]()
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}()

var rvOrder = metaFieldOrder["resourceVersion"]

// withResourceVersion returns data, the encoding/json encoding of an object,
// with metadata.resourceVersion set to rv: the bytes json.Marshal gives for
// the object with that resourceVersion, made without decoding and encoding
// it again. It returns false when data is not in the shape encoding/json
// writes for an object (the caller then encodes the object itself).
func withResourceVersion(data []byte, rv int64) ([]byte, bool) {
	// Find the top-level "metadata" object.
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		kEnd := skipString(data, i)
		if kEnd < 0 {
			return nil, false
		}
		key := string(data[i+1 : kEnd-1])
		i = skipSpace(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		if key == "metadata" {
			break
		}
		if i = skipValue(data, i); i < 0 {
			return nil, false
		}
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != ',' {
			return nil, false // the end of the object: no metadata
		}
		i++
	}
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	// Walk metadata's keys to the place resourceVersion belongs.
	field := `"resourceVersion":"` + strconv.FormatInt(rv, 10) + `"`
	i++
	first := true
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return nil, false
		}
		if data[i] == '}' {
			if first {
				return splice(data, i, i, field), true
			}
			return splice(data, i, i, ","+field), true
		}
		if !first {
			if data[i] != ',' {
				return nil, false
			}
			i = skipSpace(data, i+1)
		}
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		start := i
		kEnd := skipString(data, i)
		if kEnd < 0 {
			return nil, false
		}
		order, known := metaFieldOrder[string(data[i+1:kEnd-1])]
		if !known {
			return nil, false
		}
		i = skipSpace(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		vEnd := skipValue(data, skipSpace(data, i+1))
		if vEnd < 0 {
			return nil, false
		}
		switch {
		case order == rvOrder:
			return splice(data, start, vEnd, field), true
		case order > rvOrder:
			return splice(data, start, start, field+","), true
		}
		i = vEnd
		first = false
	}
}

// splice returns data with data[from:to] replaced by s, in a new slice.
func splice(data []byte, from, to int, s string) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(s))
	out = append(out, data[:from]...)
	out = append(out, s...)
	return append(out, data[to:]...)
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string starting at data[i]
// (a '"'), or -1.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at data[i], or
// -1. It checks only what it needs to find the value's end.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				e := skipString(data, i)
				if e < 0 {
					return -1
				}
				i = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		// A number, true, false or null.
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}
