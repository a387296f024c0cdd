package cli

import "strings"

// Aggregate is several errors reported as one, as Kubernetes'
// utilerrors.Aggregate: its message is its only error's, or "[a, b]"
// without repeats. kubectl prints an aggregate it ends with (drain's) one
// error per line, without the "error: " prefix; FormatError does too.
type Aggregate []error

func (a Aggregate) Error() string {
	var msgs []string
	seen := map[string]bool{}
	for _, err := range a {
		if m := err.Error(); !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// Unwrap gives errors.Is and errors.As the aggregated errors.
func (a Aggregate) Unwrap() []error { return a }

// lines is kubectl's MultipleErrors for an aggregate it exits with: an
// aggregate of one aggregate is read through; each error is then on a line
// of its own, a server's error in kubectl's words, anything else bare.
func (a Aggregate) lines() string {
	if len(a) == 1 {
		inner, ok := a[0].(Aggregate)
		if !ok {
			return FormatError(a[0])
		}
		a = inner
	}
	var b []string
	for _, err := range a {
		msg, ok := standardMessage(err)
		if !ok {
			msg = err.Error()
		}
		b = append(b, msg)
	}
	return strings.Join(b, "\n")
}
