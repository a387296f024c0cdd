package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// toStatus turns any error into the Status sent to the client: typed API
// errors keep their code and reason, anything else is a 500.
func toStatus(err error) api.Status {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se.Status()
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return apierrors.NewRequestEntityTooLarge("limit is " + itoa(mbe.Limit)).Status()
	}
	return apierrors.NewInternalError(err).Status()
}

// writeError writes err as a Status with its HTTP code.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	writeStatus(w, r, toStatus(err))
}

// writeStatus writes st with its HTTP code, encoded as r negotiated.
func writeStatus(w http.ResponseWriter, r *http.Request, st api.Status) {
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", itoa(int64(st.Details.RetryAfterSeconds)))
	}
	writeJSON(w, r, int(st.Code), st)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound,
		"the server could not find the requested resource"))
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, apierrors.NewGeneric(http.StatusMethodNotAllowed, api.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource"))
}

// writeJSON encodes v with code, as YAML when the client asked for it.
func writeJSON(w http.ResponseWriter, r *http.Request, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		st := apierrors.NewInternalError(err).Status()
		data, _ = json.Marshal(st)
		code = http.StatusInternalServerError
	}
	writeRaw(w, r, code, data)
}
