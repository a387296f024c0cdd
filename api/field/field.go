package field

import (
	"fmt"
	"strconv"
	"strings"
)

// Path is a field path such as spec.containers[0].name. A nil *Path is the root.
type Path struct {
	name   string
	index  string
	parent *Path
}

// NewPath starts a path at name, with optional further names.
func NewPath(name string, more ...string) *Path {
	p := &Path{name: name}
	for _, m := range more {
		p = p.Child(m)
	}
	return p
}

// Child returns the path of a named field under p.
func (p *Path) Child(name string, more ...string) *Path {
	c := &Path{name: name, parent: p}
	for _, m := range more {
		c = c.Child(m)
	}
	return c
}

// Index returns the path of list element i under p.
func (p *Path) Index(i int) *Path { return &Path{index: strconv.Itoa(i), parent: p} }

// Key returns the path of map entry k under p.
func (p *Path) Key(k string) *Path { return &Path{index: k, parent: p} }

// String renders the path as Kubernetes does: a.b[0].c[key].
func (p *Path) String() string {
	if p == nil {
		return "<nil>"
	}
	var elems []*Path
	for q := p; q != nil; q = q.parent {
		elems = append(elems, q)
	}
	var b strings.Builder
	for i := len(elems) - 1; i >= 0; i-- {
		e := elems[i]
		if e.index != "" || (e.name == "" && e.parent != nil) {
			b.WriteString("[" + e.index + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.name)
	}
	return b.String()
}

// ErrorType is the kind of a field error.
type ErrorType string

// Error types, with the wording Kubernetes prints for each.
const (
	ErrorTypeNotFound     ErrorType = "FieldValueNotFound"
	ErrorTypeRequired     ErrorType = "FieldValueRequired"
	ErrorTypeDuplicate    ErrorType = "FieldValueDuplicate"
	ErrorTypeInvalid      ErrorType = "FieldValueInvalid"
	ErrorTypeNotSupported ErrorType = "FieldValueNotSupported"
	ErrorTypeForbidden    ErrorType = "FieldValueForbidden"
	ErrorTypeTooLong      ErrorType = "FieldValueTooLong"
	ErrorTypeTooMany      ErrorType = "FieldValueTooMany"
	ErrorTypeInternal     ErrorType = "InternalError"
	// ErrorTypeTypeInvalid is a value of the wrong type (an OpenAPI
	// schema's "type").
	ErrorTypeTypeInvalid ErrorType = "FieldValueTypeInvalid"
)

// String returns the human wording of the error type.
func (t ErrorType) String() string {
	switch t {
	case ErrorTypeNotFound:
		return "Not found"
	case ErrorTypeRequired:
		return "Required value"
	case ErrorTypeDuplicate:
		return "Duplicate value"
	case ErrorTypeInvalid, ErrorTypeTypeInvalid:
		return "Invalid value"
	case ErrorTypeNotSupported:
		return "Unsupported value"
	case ErrorTypeForbidden:
		return "Forbidden"
	case ErrorTypeTooLong:
		return "Too long"
	case ErrorTypeTooMany:
		return "Too many"
	case ErrorTypeInternal:
		return "Internal error"
	}
	return string(t)
}

// omitValue marks an Error whose bad value should not be printed.
type omitValue struct{}

// OmitValue can be passed as the value of Invalid to leave it out of the message.
var OmitValue = omitValue{}

// Error is one validation failure at a field path.
type Error struct {
	Type     ErrorType
	Field    string
	BadValue any
	Detail   string
}

// Error renders "field: Type: value: detail" like Kubernetes.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Field, e.ErrorBody())
}

// ErrorBody renders the message without the field.
func (e *Error) ErrorBody() string {
	var s string
	switch e.Type {
	case ErrorTypeRequired, ErrorTypeForbidden, ErrorTypeTooLong, ErrorTypeInternal:
		s = e.Type.String()
	default:
		if _, omit := e.BadValue.(omitValue); omit || e.BadValue == nil {
			s = e.Type.String()
		} else {
			s = fmt.Sprintf("%s: %s", e.Type, quoteValue(e.BadValue))
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func quoteValue(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case *string:
		if t == nil {
			return "null"
		}
		return strconv.Quote(*t)
	case *int64:
		if t == nil {
			return "null"
		}
		return strconv.FormatInt(*t, 10)
	case *int32:
		if t == nil {
			return "null"
		}
		return strconv.FormatInt(int64(*t), 10)
	}
	return fmt.Sprintf("%v", v)
}

// ErrorList is a list of field errors; nil means valid.
type ErrorList []*Error

// ToAggregate joins the messages: one error as is, several in brackets.
func (l ErrorList) ToAggregate() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// Required says a required field is missing.
func Required(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeRequired, Field: p.String(), Detail: detail}
}

// Invalid says a value is malformed.
func Invalid(p *Path, value any, detail string) *Error {
	return &Error{Type: ErrorTypeInvalid, Field: p.String(), BadValue: value, Detail: detail}
}

// NotSupported says a value is not one of the valid ones.
func NotSupported(p *Path, value any, valid []string) *Error {
	detail := ""
	if len(valid) > 0 {
		q := make([]string, len(valid))
		for i, v := range valid {
			q[i] = strconv.Quote(v)
		}
		detail = "supported values: " + strings.Join(q, ", ")
	}
	return &Error{Type: ErrorTypeNotSupported, Field: p.String(), BadValue: value, Detail: detail}
}

// Duplicate says a value must be unique.
func Duplicate(p *Path, value any) *Error {
	return &Error{Type: ErrorTypeDuplicate, Field: p.String(), BadValue: value}
}

// Forbidden says a field may not be set or changed.
func Forbidden(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeForbidden, Field: p.String(), Detail: detail}
}

// NotFound says a referenced value does not exist.
func NotFound(p *Path, value any) *Error {
	return &Error{Type: ErrorTypeNotFound, Field: p.String(), BadValue: value}
}

// TooLong says a value exceeds maxLength.
func TooLong(p *Path, value any, maxLength int) *Error {
	return &Error{Type: ErrorTypeTooLong, Field: p.String(), BadValue: value,
		Detail: fmt.Sprintf("may not be more than %d bytes", maxLength)}
}

// TooMany says a list has more than max items.
func TooMany(p *Path, actual, max int) *Error {
	return &Error{Type: ErrorTypeTooMany, Field: p.String(), BadValue: actual,
		Detail: fmt.Sprintf("must have at most %d items", max)}
}

// InternalError reports an unexpected failure while validating.
func InternalError(p *Path, err error) *Error {
	return &Error{Type: ErrorTypeInternal, Field: p.String(), Detail: err.Error()}
}
