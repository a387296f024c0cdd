package apierrors

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestReasonForCode pins the table to apimachinery's NewGenericServerResponse.
func TestReasonForCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code   int
		method string
		want   api.StatusReason
	}{
		{400, http.MethodGet, api.StatusReasonBadRequest},
		{401, http.MethodGet, api.StatusReasonUnauthorized},
		{403, http.MethodGet, api.StatusReasonForbidden},
		{404, http.MethodGet, api.StatusReasonNotFound},
		{405, http.MethodGet, api.StatusReasonMethodNotAllowed},
		{406, http.MethodGet, api.StatusReasonNotAcceptable},
		{409, http.MethodPost, api.StatusReasonAlreadyExists},
		{409, http.MethodPut, api.StatusReasonConflict},
		{410, http.MethodGet, api.StatusReasonUnknown},
		{413, http.MethodPost, api.StatusReasonUnknown},
		{415, http.MethodPost, api.StatusReasonUnsupportedMediaType},
		{422, http.MethodPost, api.StatusReasonInvalid},
		{429, http.MethodGet, api.StatusReasonTooManyRequests},
		{500, http.MethodGet, api.StatusReasonInternalError},
		{501, http.MethodGet, api.StatusReasonInternalError},
		{502, http.MethodGet, api.StatusReasonInternalError},
		{503, http.MethodGet, api.StatusReasonServiceUnavailable},
		{504, http.MethodGet, api.StatusReasonTimeout},
		{418, http.MethodGet, api.StatusReasonUnknown},
	}
	for _, c := range cases {
		if got := ReasonForCode(c.code, c.method); got != c.want {
			t.Errorf("ReasonForCode(%d, %s) = %q, want %q", c.code, c.method, got, c.want)
		}
	}
}

func TestNewGenericServerResponse(t *testing.T) {
	t.Parallel()
	pods := GroupResource{Resource: "pods"}
	cases := []struct {
		name       string
		code       int
		method     string
		gr         GroupResource
		obj        string
		serverMsg  string
		unexpected bool
		want       string
	}{
		{"conflict on create", 409, http.MethodPost, pods, "web", "", false, "the server reported a conflict (post pods web)"},
		{"forbidden keeps the server's text", 403, http.MethodGet, pods, "", "no", true, "no (get pods)"},
		{"not acceptable without text", 406, http.MethodGet, GroupResource{}, "", "unknown", true,
			"the server was unable to respond with a content type that the client supports"},
		{"bad gateway", 502, http.MethodGet, GroupResource{}, "", "upstream", true,
			`an error on the server ("upstream") has prevented the request from succeeding`},
		{"unlisted", 410, http.MethodGet, pods, "web", "", false,
			"the server responded with the status code 410 but did not return more information (get pods web)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := NewGenericServerResponse(c.code, c.method, c.gr, c.obj, c.serverMsg, 0, c.unexpected)
			if err.Error() != c.want || err.ErrStatus.Code != int32(c.code) || err.ErrStatus.Reason != ReasonForCode(c.code, c.method) {
				t.Fatalf("got %d %q %q, want %d %q", err.ErrStatus.Code, err.ErrStatus.Reason, err.Error(), c.code, c.want)
			}
			if hasCause := len(err.ErrStatus.Details.Causes) == 1 && err.ErrStatus.Details.Causes[0].Type == api.CauseTypeUnexpectedServerResponse; hasCause != c.unexpected {
				t.Fatalf("causes = %+v, want an UnexpectedServerResponse cause: %v", err.ErrStatus.Details.Causes, c.unexpected)
			}
		})
	}
}

func TestWriteStatus(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	WriteStatus(rec, NewTooManyRequests("slow down", 3).Status())
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "3" ||
		rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("code %d, headers %v", rec.Code, rec.Header())
	}
	var st api.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || st.Reason != api.StatusReasonTooManyRequests {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
}
