package fields

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Fields is read access to an object's selectable fields.
type Fields interface {
	// Has reports whether field is present.
	Has(field string) bool
	// Get returns the value of field, "" when absent.
	Get(field string) string
}

// Set maps field names ("metadata.name", "spec.nodeName") to values.
type Set map[string]string

var _ Fields = Set(nil)

// String renders the set as sorted "field=value" terms joined by ','.
func (s Set) String() string {
	terms := make([]string, 0, len(s))
	for k, v := range s {
		terms = append(terms, k+"="+v)
	}
	sort.Strings(terms)
	return strings.Join(terms, ",")
}

// Has reports whether field is present.
func (s Set) Has(field string) bool {
	_, ok := s[field]
	return ok
}

// Get returns the value of field, "" when absent.
func (s Set) Get(field string) string { return s[field] }

// AsSelector returns a selector requiring every field of s to equal its value.
func (s Set) AsSelector() Selector { return SelectorFromSet(s) }

// Operator is a field selector operator; the values are Kubernetes'
// selection.Operator strings.
type Operator string

// Field selector operators.
const (
	Equals       Operator = "="
	DoubleEquals Operator = "=="
	NotEquals    Operator = "!="
)

// Requirement is one term of a field selector.
type Requirement struct {
	Operator Operator
	Field    string
	Value    string
}

// Requirements is the ANDed terms of a selector.
type Requirements []Requirement

// Selector is a field query. Implementations are immutable.
type Selector interface {
	// Matches reports whether the fields satisfy every term. An absent
	// field has the value "".
	Matches(Fields) bool
	// Empty reports whether the selector selects everything.
	Empty() bool
	// RequiresExactMatch returns the value field must equal, if a term
	// pins it with = or ==. The watch cache uses it to index pods by node.
	RequiresExactMatch(field string) (value string, found bool)
	// Transform rewrites every term with fn; a term rewritten to an empty
	// field and value is dropped.
	Transform(fn TransformFunc) (Selector, error)
	// Requirements returns the terms.
	Requirements() Requirements
	// String renders the selector in the syntax Parse accepts.
	String() string
}

// TransformFunc rewrites one term (for example, a legacy field name to the
// current one) or rejects it.
type TransformFunc func(field, value string) (newField, newValue string, err error)

// termSelector is the general selector: terms in parse (sorted) order.
type termSelector []Requirement

var _ Selector = termSelector(nil)

// Everything returns the selector that matches every object.
func Everything() Selector { return termSelector(nil) }

type nothingSelector struct{}

func (nothingSelector) Matches(Fields) bool                         { return false }
func (nothingSelector) Empty() bool                                 { return false }
func (nothingSelector) RequiresExactMatch(string) (string, bool)    { return "", false }
func (n nothingSelector) Transform(TransformFunc) (Selector, error) { return n, nil }
func (nothingSelector) Requirements() Requirements                  { return nil }
func (nothingSelector) String() string                              { return "" }

// Nothing returns the selector that matches no object.
func Nothing() Selector { return nothingSelector{} }

func (s termSelector) Matches(f Fields) bool {
	for i := range s {
		eq := f.Get(s[i].Field) == s[i].Value
		if eq == (s[i].Operator == NotEquals) {
			return false
		}
	}
	return true
}

func (s termSelector) Empty() bool { return len(s) == 0 }

func (s termSelector) RequiresExactMatch(field string) (string, bool) {
	for i := range s {
		if s[i].Field == field && s[i].Operator != NotEquals {
			return s[i].Value, true
		}
	}
	return "", false
}

func (s termSelector) Transform(fn TransformFunc) (Selector, error) {
	out := make(termSelector, 0, len(s))
	for _, r := range s {
		f, v, err := fn(r.Field, r.Value)
		if err != nil {
			return nil, err
		}
		if f == "" && v == "" {
			continue
		}
		out = append(out, Requirement{Operator: r.Operator, Field: f, Value: v})
	}
	return out, nil
}

func (s termSelector) Requirements() Requirements { return Requirements(slices.Clone(s)) }

func (s termSelector) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		op := "="
		if r.Operator == NotEquals {
			op = "!="
		}
		parts[i] = r.Field + op + EscapeValue(r.Value)
	}
	return strings.Join(parts, ",")
}

// SelectorFromSet returns a selector requiring each field of s to equal its
// value; a nil or empty set selects everything. Terms are sorted by field so
// String is deterministic.
func SelectorFromSet(s Set) Selector {
	out := make(termSelector, 0, len(s))
	for k, v := range s {
		out = append(out, Requirement{Operator: Equals, Field: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// OneTermEqualSelector returns the selector field=value.
func OneTermEqualSelector(field, value string) Selector {
	return termSelector{{Operator: Equals, Field: field, Value: value}}
}

// OneTermNotEqualSelector returns the selector field!=value.
func OneTermNotEqualSelector(field, value string) Selector {
	return termSelector{{Operator: NotEquals, Field: field, Value: value}}
}

// AndSelectors returns the conjunction of the selectors; Nothing() in the
// input makes the result select nothing.
func AndSelectors(selectors ...Selector) Selector {
	var out termSelector
	for _, s := range selectors {
		if _, ok := s.(nothingSelector); ok {
			return Nothing()
		}
		out = append(out, s.Requirements()...)
	}
	return out
}

var valueEscaper = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `=`, `\=`)

// EscapeValue escapes '\', ',' and '=' in a value with backslashes.
func EscapeValue(s string) string { return valueEscaper.Replace(s) }

// ErrInvalidSelector is wrapped by the escaping errors of UnescapeValue
// (and so of Parse); their text reads "invalid field selector: ...".
var ErrInvalidSelector = errors.New("invalid field selector")

// UnescapeValue undoes EscapeValue. A backslash before anything but '\',
// ',' or '=', a trailing backslash, and an unescaped ',' or '=' are errors,
// worded as Kubernetes words them.
func UnescapeValue(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	escaped := false
	for _, c := range s {
		if escaped {
			switch c {
			case '\\', ',', '=':
				b.WriteRune(c)
			default:
				return "", fmt.Errorf("%w: invalid escape sequence: %s", ErrInvalidSelector, string([]rune{'\\', c}))
			}
			escaped = false
			continue
		}
		switch c {
		case '\\':
			escaped = true
		case ',', '=':
			// Kubernetes prints the rune as a number here.
			return "", fmt.Errorf("%w: unescaped character in value: %d", ErrInvalidSelector, c)
		default:
			b.WriteRune(c)
		}
	}
	if escaped {
		return "", fmt.Errorf("%w: invalid escape sequence: \\", ErrInvalidSelector)
	}
	return b.String(), nil
}

// Parse parses a field selector: terms "field=value", "field==value" or
// "field!=value" joined by ','; ',', '=' and '\' inside values are escaped
// with '\'. Blanks are not trimmed (Kubernetes does not). The empty string
// selects everything.
func Parse(selector string) (Selector, error) {
	return ParseAndTransform(selector, nil)
}

// ParseAndTransform is Parse followed by Transform(fn); fn may be nil.
func ParseAndTransform(selector string, fn TransformFunc) (Selector, error) {
	parts := splitTerms(selector)
	sort.Strings(parts)
	out := make(termSelector, 0, len(parts))
	for _, part := range parts {
		if part == "" {
			continue
		}
		field, op, rhs, ok := splitTerm(part)
		if !ok {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", selector, part)
		}
		value, err := UnescapeValue(rhs)
		if err != nil {
			return nil, err
		}
		out = append(out, Requirement{Operator: op, Field: field, Value: value})
	}
	if fn == nil {
		return out, nil
	}
	return out.Transform(fn)
}

// splitTerms cuts the selector at unescaped commas.
func splitTerms(s string) []string {
	if s == "" {
		return nil
	}
	var terms []string
	start, escaped := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case escaped:
			escaped = false
		case s[i] == '\\':
			escaped = true
		case s[i] == ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

// splitTerm finds the first operator in term; at each position "!=" and
// "==" are tried before "=".
func splitTerm(term string) (field string, op Operator, value string, ok bool) {
	for i := 0; i < len(term); i++ {
		rest := term[i:]
		switch {
		case strings.HasPrefix(rest, "!="):
			return term[:i], NotEquals, rest[2:], true
		case strings.HasPrefix(rest, "=="):
			// Kubernetes records "==" as "=": they mean the same.
			return term[:i], Equals, rest[2:], true
		case strings.HasPrefix(rest, "="):
			return term[:i], Equals, rest[1:], true
		}
	}
	return "", "", "", false
}
