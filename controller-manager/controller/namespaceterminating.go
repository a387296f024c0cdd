package controller

import (
	"errors"
	"strings"

	"github.com/minik8s/minik8s/api/apierrors"
)

// NamespaceTerminating reports whether err is the apiserver refusing a
// create in a namespace being deleted (kube marks it with the
// NamespaceTerminating cause; the message says the same): controllers that
// create per-namespace objects treat it as done, not as a failure to retry.
func NamespaceTerminating(err error) bool {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsForbidden(err) {
		return false
	}
	st := se.Status()
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == "NamespaceTerminating" {
				return true
			}
		}
	}
	return strings.Contains(st.Message, "because it is being terminated")
}
