package labels

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// Operator relates a requirement's key to its values. The values are
// Kubernetes' selection.Operator strings.
type Operator string

// Selector operators.
const (
	OpDoesNotExist Operator = "!"
	OpEquals       Operator = "="
	OpDoubleEquals Operator = "=="
	OpIn           Operator = "in"
	OpNotEquals    Operator = "!="
	OpNotIn        Operator = "notin"
	OpExists       Operator = "exists"
	OpGreaterThan  Operator = "gt"
	OpLessThan     Operator = "lt"
)

var (
	binaryOperators = []string{
		string(OpIn), string(OpNotIn), string(OpEquals), string(OpDoubleEquals),
		string(OpNotEquals), string(OpGreaterThan), string(OpLessThan),
	}
	validOperators = append(slices.Clone(binaryOperators), string(OpExists), string(OpDoesNotExist))
)

// Requirement is one term of a selector: a key, an operator and values.
// Build it with NewRequirement; the zero value is invalid.
type Requirement struct {
	key      string
	operator Operator
	// values is nearly always one element; a slice scan beats a map there.
	values []string
}

// NewRequirement validates and returns a requirement. Kubernetes' rules: In
// and NotIn need at least one value, the equality operators exactly one,
// Exists and DoesNotExist none, Gt and Lt one integer; the key must be a
// qualified name and every value a valid label value. The empty string is a
// valid value. The error lists every problem, in Kubernetes' wording.
func NewRequirement(key string, op Operator, values []string) (*Requirement, error) {
	return newRequirement(key, op, values, nil)
}

func newRequirement(key string, op Operator, values []string, path *field.Path) (*Requirement, error) {
	var errs field.ErrorList
	if err := validateKey(key, path.Child("key")); err != nil {
		errs = append(errs, err)
	}
	valuesPath := path.Child("values")
	switch op {
	case OpIn, OpNotIn:
		if len(values) == 0 {
			errs = append(errs, field.Invalid(valuesPath, values, "for 'in', 'notin' operators, values set can't be empty"))
		}
	case OpEquals, OpDoubleEquals, OpNotEquals:
		if len(values) != 1 {
			errs = append(errs, field.Invalid(valuesPath, values, "exact-match compatibility requires one single value"))
		}
	case OpExists, OpDoesNotExist:
		if len(values) != 0 {
			errs = append(errs, field.Invalid(valuesPath, values, "values set must be empty for exists and does not exist"))
		}
	case OpGreaterThan, OpLessThan:
		if len(values) != 1 {
			errs = append(errs, field.Invalid(valuesPath, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
		}
		for i, v := range values {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				errs = append(errs, field.Invalid(valuesPath.Index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), string(op), validOperators))
	}
	for i, v := range values {
		if msgs := naming.IsValidLabelValue(v); len(msgs) > 0 {
			errs = append(errs, field.Invalid(valuesPath.Index(i).Key(key), v, strings.Join(msgs, "; ")))
		}
	}
	if len(errs) > 0 {
		return nil, aggregate(errs)
	}
	return &Requirement{key: key, operator: op, values: slices.Clone(values)}, nil
}

// aggregate turns field errors into one error with Kubernetes' aggregate
// wording, dropping duplicate messages as Kubernetes does.
func aggregate(errs field.ErrorList) error {
	seen := make(map[string]bool, len(errs))
	var uniq field.ErrorList
	for _, e := range errs {
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			uniq = append(uniq, e)
		}
	}
	return errors.New(uniq.ToAggregate())
}

func validateKey(key string, path *field.Path) *field.Error {
	if msgs := naming.IsQualifiedName(key); len(msgs) > 0 {
		return field.Invalid(path, key, strings.Join(msgs, "; "))
	}
	return nil
}

// Key returns the requirement's key.
func (r *Requirement) Key() string { return r.key }

// Operator returns the requirement's operator.
func (r *Requirement) Operator() Operator { return r.operator }

// Values returns a sorted copy of the requirement's values.
func (r *Requirement) Values() []string {
	v := slices.Clone(r.values)
	sort.Strings(v)
	return v
}

// Matches reports whether ls satisfies the requirement. NotIn and != match
// when the key is absent; Gt and Lt need an integer label value.
func (r *Requirement) Matches(ls Labels) bool {
	switch r.operator {
	case OpIn, OpEquals, OpDoubleEquals:
		v, ok := ls.Lookup(r.key)
		return ok && slices.Contains(r.values, v)
	case OpNotIn, OpNotEquals:
		v, ok := ls.Lookup(r.key)
		return !ok || !slices.Contains(r.values, v)
	case OpExists:
		return ls.Has(r.key)
	case OpDoesNotExist:
		return !ls.Has(r.key)
	case OpGreaterThan, OpLessThan:
		v, ok := ls.Lookup(r.key)
		if !ok || len(r.values) != 1 {
			return false
		}
		have, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, err := strconv.ParseInt(r.values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.operator == OpGreaterThan {
			return have > want
		}
		return have < want
	}
	return false
}

// String renders the requirement in selector syntax, values sorted.
func (r *Requirement) String() string {
	var b strings.Builder
	if r.operator == OpDoesNotExist {
		b.WriteByte('!')
	}
	b.WriteString(r.key)
	switch r.operator {
	case OpExists, OpDoesNotExist:
		return b.String()
	case OpEquals:
		b.WriteString("=")
	case OpDoubleEquals:
		b.WriteString("==")
	case OpNotEquals:
		b.WriteString("!=")
	case OpGreaterThan:
		b.WriteString(">")
	case OpLessThan:
		b.WriteString("<")
	case OpIn:
		b.WriteString(" in (")
	case OpNotIn:
		b.WriteString(" notin (")
	}
	vals := r.values
	if !sort.StringsAreSorted(vals) {
		vals = r.Values()
	}
	b.WriteString(strings.Join(vals, ","))
	if r.operator == OpIn || r.operator == OpNotIn {
		b.WriteByte(')')
	}
	return b.String()
}

// Equal reports whether two requirements are the same term.
func (r Requirement) Equal(x Requirement) bool {
	return r.key == x.key && r.operator == x.operator && slices.Equal(r.values, x.values)
}

// Requirements is the ANDed terms of a selector.
type Requirements []Requirement

// String renders the requirements joined by ", ".
func (rs Requirements) String() string {
	parts := make([]string, len(rs))
	for i := range rs {
		parts[i] = rs[i].String()
	}
	return strings.Join(parts, ", ")
}

// Selector is a label query. Implementations are immutable.
type Selector interface {
	// Matches reports whether the labels satisfy every requirement.
	Matches(Labels) bool
	// Empty reports whether the selector selects everything.
	Empty() bool
	// String renders the selector in the syntax Parse accepts.
	String() string
	// Requirements returns the terms; selectable is false for Nothing().
	Requirements() (requirements Requirements, selectable bool)
	// RequiresExactMatch returns the single value label must have, if the
	// selector pins it with =, == or a one-value in.
	RequiresExactMatch(label string) (value string, found bool)
	// Add returns a new selector with the extra requirements ANDed in.
	Add(rs ...Requirement) Selector
}

// requirementsSelector is the general selector: requirements sorted by key.
type requirementsSelector []Requirement

var _ Selector = requirementsSelector(nil)

// Everything returns the selector that matches all objects.
func Everything() Selector { return requirementsSelector(nil) }

type nothingSelector struct{}

func (nothingSelector) Matches(Labels) bool                      { return false }
func (nothingSelector) Empty() bool                              { return false }
func (nothingSelector) String() string                           { return "" }
func (nothingSelector) Requirements() (Requirements, bool)       { return nil, false }
func (nothingSelector) RequiresExactMatch(string) (string, bool) { return "", false }
func (n nothingSelector) Add(...Requirement) Selector            { return n }

// Nothing returns the selector that matches no object (a nil
// api.LabelSelector).
func Nothing() Selector { return nothingSelector{} }

// MatchesNothing reports whether s is Nothing().
func MatchesNothing(s Selector) bool {
	_, ok := s.(nothingSelector)
	return ok
}

func (s requirementsSelector) Matches(ls Labels) bool {
	for i := range s {
		if !s[i].Matches(ls) {
			return false
		}
	}
	return true
}

func (s requirementsSelector) Empty() bool { return len(s) == 0 }

func (s requirementsSelector) String() string {
	parts := make([]string, len(s))
	for i := range s {
		parts[i] = s[i].String()
	}
	return strings.Join(parts, ",")
}

func (s requirementsSelector) Requirements() (Requirements, bool) {
	return Requirements(slices.Clone(s)), true
}

func (s requirementsSelector) RequiresExactMatch(label string) (string, bool) {
	for i := range s {
		if s[i].key != label {
			continue
		}
		switch s[i].operator {
		case OpEquals, OpDoubleEquals, OpIn:
			if len(s[i].values) == 1 {
				return s[i].values[0], true
			}
		}
		return "", false
	}
	return "", false
}

func (s requirementsSelector) Add(rs ...Requirement) Selector {
	out := make(requirementsSelector, 0, len(s)+len(rs))
	out = append(out, s...)
	out = append(out, rs...)
	sortByKey(out)
	return out
}

func sortByKey(rs []Requirement) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].key < rs[j].key })
}

// SelectorFromSet returns a selector matching exactly the labels of ls
// (key=value for each); an empty or nil set selects everything. It does not
// validate: use ValidatedSelectorFromSet for user input.
func SelectorFromSet(ls Set) Selector { return SelectorFromValidatedSet(ls) }

// SelectorFromValidatedSet is SelectorFromSet for a set known to be valid.
func SelectorFromValidatedSet(ls Set) Selector {
	if len(ls) == 0 {
		return Everything()
	}
	rs := make(requirementsSelector, 0, len(ls))
	for k, v := range ls {
		rs = append(rs, Requirement{key: k, operator: OpEquals, values: []string{v}})
	}
	sortByKey(rs)
	return rs
}

// ValidatedSelectorFromSet is SelectorFromSet that validates keys and values.
func ValidatedSelectorFromSet(ls Set) (Selector, error) {
	if len(ls) == 0 {
		return Everything(), nil
	}
	rs := make(requirementsSelector, 0, len(ls))
	for k, v := range ls {
		r, err := NewRequirement(k, OpEquals, []string{v})
		if err != nil {
			return nil, err
		}
		rs = append(rs, *r)
	}
	sortByKey(rs)
	return rs, nil
}

// Operators of api.LabelSelectorRequirement.
const (
	LabelSelectorOpIn           = "In"
	LabelSelectorOpNotIn        = "NotIn"
	LabelSelectorOpExists       = "Exists"
	LabelSelectorOpDoesNotExist = "DoesNotExist"
)

// SelectorFromLabelSelector converts the structured selector of a workload
// spec: nil selects nothing, an empty one everything; matchLabels and
// matchExpressions are ANDed.
func SelectorFromLabelSelector(ps *api.LabelSelector) (Selector, error) {
	if ps == nil {
		return Nothing(), nil
	}
	if len(ps.MatchLabels)+len(ps.MatchExpressions) == 0 {
		return Everything(), nil
	}
	rs := make(requirementsSelector, 0, len(ps.MatchLabels)+len(ps.MatchExpressions))
	for k, v := range ps.MatchLabels {
		r, err := NewRequirement(k, OpEquals, []string{v})
		if err != nil {
			return nil, err
		}
		rs = append(rs, *r)
	}
	for _, expr := range ps.MatchExpressions {
		var op Operator
		switch expr.Operator {
		case LabelSelectorOpIn:
			op = OpIn
		case LabelSelectorOpNotIn:
			op = OpNotIn
		case LabelSelectorOpExists:
			op = OpExists
		case LabelSelectorOpDoesNotExist:
			op = OpDoesNotExist
		default:
			return nil, fmt.Errorf("%q is not a valid label selector operator", expr.Operator)
		}
		r, err := NewRequirement(expr.Key, op, expr.Values)
		if err != nil {
			return nil, err
		}
		rs = append(rs, *r)
	}
	sortByKey(rs)
	return rs, nil
}

// LabelSelectorAsMap returns the matchLabels of ps plus its single-value In
// expressions as a map, or an error for expressions a map cannot express
// (Kubernetes' metav1.LabelSelectorAsMap).
func LabelSelectorAsMap(ps *api.LabelSelector) (map[string]string, error) {
	if ps == nil {
		return nil, nil
	}
	out := make(map[string]string, len(ps.MatchLabels))
	for k, v := range ps.MatchLabels {
		out[k] = v
	}
	for _, expr := range ps.MatchExpressions {
		switch expr.Operator {
		case LabelSelectorOpIn:
			if len(expr.Values) != 1 {
				return out, fmt.Errorf("operator %q without a single value cannot be converted into the old label selector format", expr.Operator)
			}
			out[expr.Key] = expr.Values[0]
		case LabelSelectorOpNotIn, LabelSelectorOpExists, LabelSelectorOpDoesNotExist:
			return out, fmt.Errorf("operator %q cannot be converted into the old label selector format", expr.Operator)
		default:
			return out, fmt.Errorf("%q is not a valid selector operator", expr.Operator)
		}
	}
	return out, nil
}
