package quota

import (
	"sort"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// ResourceNames are the keys of a list, sorted.
func ResourceNames(l api.ResourceList) []api.ResourceName {
	out := make([]api.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Add is a + b, per name.
func Add(a, b api.ResourceList) api.ResourceList {
	out := api.ResourceList{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if cur, ok := out[k]; ok {
			cur.Add(v)
			out[k] = cur
		} else {
			out[k] = v
		}
	}
	return out
}

// SubtractNonNegative is a - b per name of a, never below zero.
func SubtractNonNegative(a, b api.ResourceList) api.ResourceList {
	out := api.ResourceList{}
	for k, v := range a {
		if s, ok := b[k]; ok {
			v.Sub(s)
			if v.Sign() < 0 {
				v = count(0)
			}
		}
		out[k] = v
	}
	return out
}

// Mask is the part of l named in names.
func Mask(l api.ResourceList, names []api.ResourceName) api.ResourceList {
	out := api.ResourceList{}
	for _, n := range names {
		if v, ok := l[n]; ok {
			out[n] = v
		}
	}
	return out
}

// LessThanOrEqual reports whether every entry of a is at most b's (names
// b lacks are unbounded), and the names that exceed.
func LessThanOrEqual(a, b api.ResourceList) (bool, []api.ResourceName) {
	var exceeded []api.ResourceName
	for _, k := range ResourceNames(a) {
		if limit, ok := b[k]; ok {
			if v := a[k]; v.Cmp(limit) > 0 {
				exceeded = append(exceeded, k)
			}
		}
	}
	return len(exceeded) == 0, exceeded
}

// RemoveZeros drops the zero entries.
func RemoveZeros(l api.ResourceList) api.ResourceList {
	out := api.ResourceList{}
	for k, v := range l {
		if !v.IsZero() {
			out[k] = v
		}
	}
	return out
}

// Negative are the names whose value is below zero.
func Negative(l api.ResourceList) []api.ResourceName {
	var out []api.ResourceName
	for _, k := range ResourceNames(l) {
		if v := l[k]; v.Sign() < 0 {
			out = append(out, k)
		}
	}
	return out
}

// Equals reports whether a and b have the same names and amounts.
func Equals(a, b api.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// String prints a list as Kubernetes' quota messages do: name=value,
// sorted by name, comma-separated.
func String(l api.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, k := range ResourceNames(l) {
		v := l[k]
		parts = append(parts, string(k)+"="+v.String())
	}
	return strings.Join(parts, ",")
}

// NamesString prints names sorted, comma-separated.
func NamesString(names []api.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
