package patch

import (
	"errors"
	"fmt"
)

// Error classes. Every error returned by this package wraps one of them.
var (
	// ErrInvalidJSON: a document or patch is not valid JSON, or not of the
	// JSON type required (an object). A server answers 400 Bad Request.
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrInvalidPatch: the patch is valid JSON but malformed (an unknown
	// operation or directive, a bad JSON pointer, a list item without its
	// merge key). A server answers 400 Bad Request.
	ErrInvalidPatch = errors.New("invalid patch")
	// ErrCannotApply: a well-formed patch does not apply to this document
	// (a failed test operation, a missing path, copies beyond
	// MaxJSONPatchCopyBytes). A server answers 422.
	ErrCannotApply = errors.New("patch cannot be applied")
	// ErrTooLarge: a JSON patch has more than MaxJSONPatchOperations
	// operations. A server answers 413 Request Entity Too Large.
	ErrTooLarge = errors.New("patch too large")
)

// patchError carries a full message and its class.
type patchError struct {
	class error
	msg   string
}

func (e *patchError) Error() string { return e.msg }
func (e *patchError) Unwrap() error { return e.class }

func invalidPatch(format string, args ...any) error {
	return &patchError{class: ErrInvalidPatch, msg: fmt.Sprintf(format, args...)}
}

func cannotApply(format string, args ...any) error {
	return &patchError{class: ErrCannotApply, msg: fmt.Sprintf(format, args...)}
}

func invalidJSON(what string, err error) error {
	return &patchError{class: ErrInvalidJSON, msg: fmt.Sprintf("%s: invalid JSON: %v", what, err)}
}
