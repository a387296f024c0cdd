package labels

import (
	"maps"
	"slices"
	"strings"
)

// Labels is read access to a set of labels.
type Labels interface {
	// Has reports whether label is present.
	Has(label string) bool
	// Get returns the value of label, "" when absent.
	Get(label string) string
	// Lookup returns the value of label and whether it is present.
	Lookup(label string) (value string, exists bool)
}

// Set is a map of label keys to values; it implements Labels.
type Set map[string]string

var _ Labels = Set(nil)

// String renders the set as "k1=v1,k2=v2", sorted by key.
func (ls Set) String() string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(ls)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(ls[k])
	}
	return b.String()
}

// Has reports whether label is present.
func (ls Set) Has(label string) bool {
	_, ok := ls[label]
	return ok
}

// Get returns the value of label, "" when absent.
func (ls Set) Get(label string) string { return ls[label] }

// Lookup returns the value of label and whether it is present.
func (ls Set) Lookup(label string) (string, bool) {
	v, ok := ls[label]
	return v, ok
}

// AsSelector returns a selector matching exactly this set, without
// validating it (see SelectorFromSet).
func (ls Set) AsSelector() Selector { return SelectorFromSet(ls) }

// AsValidatedSelector is AsSelector that validates keys and values first.
func (ls Set) AsValidatedSelector() (Selector, error) { return ValidatedSelectorFromSet(ls) }

// FormatLabels renders a label map like Set.String, or "<none>" when empty,
// as kubectl prints it.
func FormatLabels(m map[string]string) string {
	if s := Set(m).String(); s != "" {
		return s
	}
	return "<none>"
}

// Conflicts reports whether the two sets give some key different values.
func Conflicts(a, b Set) bool {
	if len(b) < len(a) {
		a, b = b, a
	}
	for k, v := range a {
		if w, ok := b[k]; ok && w != v {
			return true
		}
	}
	return false
}

// Merge returns a new set with the labels of a overlaid by those of b.
func Merge(a, b Set) Set {
	out := make(Set, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Equals reports whether the two sets hold the same labels.
func Equals(a, b Set) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
