package apierrors

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
)

// GroupResource names a resource within an API group ("deployments", "apps").
type GroupResource struct {
	Group    string
	Resource string
}

// String renders "resource" or "resource.group" as Kubernetes messages do.
func (gr GroupResource) String() string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// GroupKind names a kind within an API group ("Deployment", "apps").
type GroupKind struct {
	Group string
	Kind  string
}

// String renders "Kind" or "Kind.group".
func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// StatusError is an error that carries a Kubernetes Status.
type StatusError struct {
	ErrStatus api.Status
}

func (e *StatusError) Error() string { return e.ErrStatus.Message }

// Status returns the Status to send to (or received from) a client.
func (e *StatusError) Status() api.Status { return e.ErrStatus }

func newStatus(code int32, reason api.StatusReason, msg string, d *api.StatusDetails) *StatusError {
	return &StatusError{api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusFailure,
		Code:     code,
		Reason:   reason,
		Message:  msg,
		Details:  d,
	}}
}

// FromStatus turns a received Status into an error.
func FromStatus(s api.Status) *StatusError {
	s.Kind, s.APIVersion = "Status", "v1"
	return &StatusError{s}
}

// NewNotFound: `pods "x" not found`.
func NewNotFound(gr GroupResource, name string) *StatusError {
	return newStatus(http.StatusNotFound, api.StatusReasonNotFound,
		fmt.Sprintf("%s %q not found", gr, name),
		&api.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// NewAlreadyExists: `pods "x" already exists`.
func NewAlreadyExists(gr GroupResource, name string) *StatusError {
	return newStatus(http.StatusConflict, api.StatusReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists", gr, name),
		&api.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// NewConflict reports an optimistic-concurrency failure on name.
func NewConflict(gr GroupResource, name string, err error) *StatusError {
	return newStatus(http.StatusConflict, api.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %v", gr, name, err),
		&api.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// OptimisticLockErrorMsg is the text of the conflict on a stale resourceVersion.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// NewInvalid: `Pod "x" is invalid: spec.containers[0].image: Required value`,
// with one cause per field error.
func NewInvalid(gk GroupKind, name string, errs field.ErrorList) *StatusError {
	causes := make([]api.StatusCause, 0, len(errs))
	for _, e := range errs {
		causes = append(causes, api.StatusCause{Type: api.CauseType(e.Type), Message: e.ErrorBody(), Field: e.Field})
	}
	msg := fmt.Sprintf("%s %q is invalid", gk, name)
	if len(errs) > 0 {
		msg += ": " + errs.ToAggregate()
	}
	return newStatus(http.StatusUnprocessableEntity, api.StatusReasonInvalid, msg,
		&api.StatusDetails{Group: gk.Group, Kind: gk.Kind, Name: name, Causes: causes})
}

// NewBadRequest reports a malformed request.
func NewBadRequest(msg string) *StatusError {
	return newStatus(http.StatusBadRequest, api.StatusReasonBadRequest, msg, nil)
}

// NewUnauthorized reports a request without valid credentials.
func NewUnauthorized(msg string) *StatusError {
	if msg == "" {
		msg = "Unauthorized"
	}
	return newStatus(http.StatusUnauthorized, api.StatusReasonUnauthorized, msg, nil)
}

// NewForbidden: `pods "x" is forbidden: reason`.
func NewForbidden(gr GroupResource, name string, err error) *StatusError {
	var msg string
	if name == "" {
		msg = fmt.Sprintf("%s is forbidden: %v", gr, err)
	} else {
		msg = fmt.Sprintf("%s %q is forbidden: %v", gr, name, err)
	}
	return newStatus(http.StatusForbidden, api.StatusReasonForbidden, msg,
		&api.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// NewMethodNotSupported: `create is not supported on resources of kind "pods"`.
func NewMethodNotSupported(gr GroupResource, action string) *StatusError {
	return newStatus(http.StatusMethodNotAllowed, api.StatusReasonMethodNotAllowed,
		fmt.Sprintf("%s is not supported on resources of kind %q", action, gr),
		&api.StatusDetails{Group: gr.Group, Kind: gr.Resource})
}

// NewResourceExpired reports a resourceVersion that is no longer available (410).
func NewResourceExpired(msg string) *StatusError {
	return newStatus(http.StatusGone, api.StatusReasonExpired, msg, nil)
}

// NewGone reports a resource that is gone (410, reason Gone).
func NewGone(msg string) *StatusError {
	return newStatus(http.StatusGone, api.StatusReasonGone, msg, nil)
}

// NewRequestEntityTooLarge reports an oversize request (413).
func NewRequestEntityTooLarge(msg string) *StatusError {
	return newStatus(http.StatusRequestEntityTooLarge, api.StatusReasonRequestEntityTooLarge,
		"Request entity too large: "+msg, nil)
}

// NewUnsupportedMediaType reports a request body in a media type the
// server does not read (415), listing those it does, in Kubernetes' words.
func NewUnsupportedMediaType(accepted []string) *StatusError {
	return newStatus(http.StatusUnsupportedMediaType, api.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(accepted, ", "), nil)
}

// NewNotAcceptable reports an Accept header the server cannot satisfy
// (406), listing the media types it can send, in Kubernetes' words.
func NewNotAcceptable(accepted []string) *StatusError {
	return newStatus(http.StatusNotAcceptable, api.StatusReasonNotAcceptable,
		"only the following media types are accepted: "+strings.Join(accepted, ", "), nil)
}

// NewTooManyRequests reports throttling (429) with a retry hint.
func NewTooManyRequests(msg string, retryAfterSeconds int) *StatusError {
	return newStatus(http.StatusTooManyRequests, api.StatusReasonTooManyRequests, msg,
		&api.StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)})
}

// NewInternalError wraps an unexpected server failure (500).
func NewInternalError(err error) *StatusError {
	return newStatus(http.StatusInternalServerError, api.StatusReasonInternalError,
		fmt.Sprintf("Internal error occurred: %v", err),
		&api.StatusDetails{Causes: []api.StatusCause{{Message: err.Error()}}})
}

// NewServiceUnavailable reports a temporarily unavailable server (503).
func NewServiceUnavailable(msg string) *StatusError {
	return newStatus(http.StatusServiceUnavailable, api.StatusReasonServiceUnavailable, msg, nil)
}

// NewTimeout reports a request that did not complete in time (504).
func NewTimeout(msg string, retryAfterSeconds int) *StatusError {
	return newStatus(http.StatusGatewayTimeout, api.StatusReasonTimeout, msg,
		&api.StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)})
}

// NewGeneric builds a StatusError from parts, for codes without a
// constructor. A NotFound, AlreadyExists, Conflict, Invalid or
// MethodNotAllowed carries details, empty when nothing is named
// (`"details":{}`), as kube-apiserver's do: clients such as kubectl debug
// read them without checking.
func NewGeneric(code int32, reason api.StatusReason, msg string) *StatusError {
	var d *api.StatusDetails
	switch reason {
	case api.StatusReasonNotFound, api.StatusReasonAlreadyExists, api.StatusReasonConflict,
		api.StatusReasonInvalid, api.StatusReasonMethodNotAllowed:
		d = &api.StatusDetails{}
	}
	return newStatus(code, reason, msg, d)
}

// ReasonForError returns the Status reason of err, or "" if err carries none.
func ReasonForError(err error) api.StatusReason {
	var se *StatusError
	if errors.As(err, &se) {
		return se.ErrStatus.Reason
	}
	return api.StatusReasonUnknown
}

// CodeForError returns the HTTP code of err, or 0 if err carries none.
func CodeForError(err error) int32 {
	var se *StatusError
	if errors.As(err, &se) {
		return se.ErrStatus.Code
	}
	return 0
}

func hasReason(err error, reason api.StatusReason, code int32) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	if se.ErrStatus.Reason == reason {
		return true
	}
	return se.ErrStatus.Reason == api.StatusReasonUnknown && se.ErrStatus.Code == code
}

// IsNotFound reports a 404 NotFound.
func IsNotFound(err error) bool { return hasReason(err, api.StatusReasonNotFound, 404) }

// IsAlreadyExists reports a create of an existing name.
func IsAlreadyExists(err error) bool { return hasReason(err, api.StatusReasonAlreadyExists, -1) }

// IsConflict reports a 409 Conflict (stale resourceVersion or failed precondition).
func IsConflict(err error) bool { return hasReason(err, api.StatusReasonConflict, 409) }

// IsInvalid reports a 422 validation failure.
func IsInvalid(err error) bool { return hasReason(err, api.StatusReasonInvalid, 422) }

// IsBadRequest reports a 400.
func IsBadRequest(err error) bool { return hasReason(err, api.StatusReasonBadRequest, 400) }

// IsUnauthorized reports a 401.
func IsUnauthorized(err error) bool { return hasReason(err, api.StatusReasonUnauthorized, 401) }

// IsForbidden reports a 403.
func IsForbidden(err error) bool { return hasReason(err, api.StatusReasonForbidden, 403) }

// IsMethodNotSupported reports a 405.
func IsMethodNotSupported(err error) bool {
	return hasReason(err, api.StatusReasonMethodNotAllowed, 405)
}

// IsResourceExpired reports a 410 Expired (compacted or too old resourceVersion).
func IsResourceExpired(err error) bool { return hasReason(err, api.StatusReasonExpired, -1) }

// IsGone reports a 410 of either reason, Gone or Expired.
func IsGone(err error) bool {
	return hasReason(err, api.StatusReasonGone, 410) || IsResourceExpired(err)
}

// IsRequestEntityTooLarge reports a 413.
func IsRequestEntityTooLarge(err error) bool {
	return hasReason(err, api.StatusReasonRequestEntityTooLarge, 413)
}

// IsNotAcceptable reports a 406.
func IsNotAcceptable(err error) bool { return hasReason(err, api.StatusReasonNotAcceptable, 406) }

// IsUnsupportedMediaType reports a 415.
func IsUnsupportedMediaType(err error) bool {
	return hasReason(err, api.StatusReasonUnsupportedMediaType, 415)
}

// IsTooManyRequests reports a 429.
func IsTooManyRequests(err error) bool { return hasReason(err, api.StatusReasonTooManyRequests, 429) }

// IsInternalError reports a 500.
func IsInternalError(err error) bool { return hasReason(err, api.StatusReasonInternalError, 500) }

// IsServiceUnavailable reports a 503.
func IsServiceUnavailable(err error) bool {
	return hasReason(err, api.StatusReasonServiceUnavailable, 503)
}
