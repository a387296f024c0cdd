package apierrors

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// genericResponses is the one table from an HTTP code to the reason (and
// Kubernetes' generic message) of a failure that came without a Status, as
// apimachinery's NewGenericServerResponse has it. An empty message means
// the server's own text is the message. 409 is Conflict, or AlreadyExists
// for a POST (ReasonForCode); codes not listed have no reason, except that
// any 5xx is an InternalError.
var genericResponses = map[int]struct {
	reason  api.StatusReason
	message string
}{
	http.StatusBadRequest:           {api.StatusReasonBadRequest, "the server rejected our request for an unknown reason"},
	http.StatusUnauthorized:         {api.StatusReasonUnauthorized, "the server has asked for the client to provide credentials"},
	http.StatusForbidden:            {api.StatusReasonForbidden, ""},
	http.StatusNotFound:             {api.StatusReasonNotFound, "the server could not find the requested resource"},
	http.StatusMethodNotAllowed:     {api.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource"},
	http.StatusNotAcceptable:        {api.StatusReasonNotAcceptable, ""},
	http.StatusConflict:             {api.StatusReasonConflict, "the server reported a conflict"},
	http.StatusUnsupportedMediaType: {api.StatusReasonUnsupportedMediaType, ""},
	http.StatusUnprocessableEntity:  {api.StatusReasonInvalid, "the server rejected our request due to an error in our request"},
	http.StatusTooManyRequests:      {api.StatusReasonTooManyRequests, "the server has received too many requests and has asked us to try again later"},
	http.StatusServiceUnavailable:   {api.StatusReasonServiceUnavailable, "the server is currently unable to handle the request"},
	http.StatusGatewayTimeout:       {api.StatusReasonTimeout, "the server was unable to return a response in the time allotted, but may still be processing the request"},
}

// ReasonForCode is the reason of a failed response with code that carried
// no Status, to a request with method: Kubernetes' table (409 is
// AlreadyExists for a POST, Conflict otherwise; any other 5xx is an
// InternalError; other codes have no reason).
func ReasonForCode(code int, method string) api.StatusReason {
	if code == http.StatusConflict && method == http.MethodPost {
		return api.StatusReasonAlreadyExists
	}
	if g, ok := genericResponses[code]; ok {
		return g.reason
	}
	if code >= 500 {
		return api.StatusReasonInternalError
	}
	return api.StatusReasonUnknown
}

// NewGenericServerResponse is apimachinery's error for a failed response
// that is not a Status: the reason from the code (ReasonForCode), a generic
// message naming the request's verb, resource and name, and, when
// unexpected, the server's text as a cause of type UnexpectedServerResponse.
func NewGenericServerResponse(code int, method string, gr GroupResource, name, serverMessage string, retryAfterSeconds int, unexpected bool) *StatusError {
	reason := ReasonForCode(code, method)
	msg := fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
	if g, ok := genericResponses[code]; ok {
		msg = g.message
		if msg == "" {
			msg = serverMessage
		}
	} else if code >= 500 {
		msg = fmt.Sprintf("an error on the server (%q) has prevented the request from succeeding", serverMessage)
	}
	if code == http.StatusNotAcceptable && (serverMessage == "" || serverMessage == "unknown") {
		msg = "the server was unable to respond with a content type that the client supports"
	}
	switch {
	case gr.Resource != "" && name != "":
		msg = fmt.Sprintf("%s (%s %s %s)", msg, strings.ToLower(method), gr, name)
	case gr.Resource != "":
		msg = fmt.Sprintf("%s (%s %s)", msg, strings.ToLower(method), gr)
	}
	d := &api.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name, RetryAfterSeconds: int32(retryAfterSeconds)}
	if unexpected {
		d.Causes = []api.StatusCause{{Type: api.CauseTypeUnexpectedServerResponse, Message: serverMessage}}
	}
	return newStatus(int32(code), reason, msg, d)
}

// WriteStatus answers an HTTP request with st as JSON: st.Code is the HTTP
// status (500 if unset), and a status that asks the client to wait says so
// in Retry-After too.
func WriteStatus(w http.ResponseWriter, st api.Status) {
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	data, err := json.Marshal(st)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
