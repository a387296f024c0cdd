package cli

import (
	"fmt"
	"io"
)

// Failures collects the errors of a verb that goes on after a failure, as
// kubectl does (get, describe, delete, apply of several objects): each
// failure but the last is printed as soon as the next one comes, and the
// last is kept for the exit path, where Run prints it.
type Failures struct {
	// Out receives every failure but the last (a command's ErrOut).
	Out  io.Writer
	last error
}

// Add records err; the failure recorded before it is printed now.
func (f *Failures) Add(err error) {
	if f.last != nil {
		fmt.Fprintln(f.Out, FormatError(f.last))
	}
	f.last = err
}

// Last is the last failure recorded, or nil.
func (f *Failures) Last() error { return f.last }
