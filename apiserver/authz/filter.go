package authz

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Filter authorizes every request with a before passing it on. It needs the
// parsed request (request.WithInfo) and the authenticated user
// (request.WithUser) in the context, so it goes after authentication; a
// request without either fails with 500 rather than slipping through.
// Allowed requests continue even if an authorizer also reported an error,
// as in kube-apiserver; refused ones get 403 with reason Forbidden and
// kube-apiserver's message (`pods "x" is forbidden: User "bob" cannot get
// resource "pods" in API group "" in the namespace "default"`); a refusal
// caused by an error is a 500.
func Filter(a Authorizer) func(http.Handler) http.Handler {
	log := slog.Default().With("component", "authz")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			info, ok := request.InfoFrom(ctx)
			if !ok {
				request.WriteStatus(w, r, apierrors.NewInternalError(errors.New("no RequestInfo found in the context")).Status())
				return
			}
			user, ok := request.UserFrom(ctx)
			if !ok {
				request.WriteStatus(w, r, apierrors.NewInternalError(errors.New("no User found in the context")).Status())
				return
			}
			attrs := AttributesFrom(info, user)
			decision, reason, err := a.Authorize(ctx, attrs)
			if decision == Allow {
				next.ServeHTTP(w, r)
				return
			}
			if err != nil {
				log.Error("authorization failed", "user", user.Name, "verb", attrs.Verb, "path", attrs.Path, "err", err)
				request.WriteStatus(w, r, apierrors.NewInternalError(err).Status())
				return
			}
			log.Debug("forbidden", "user", user.Name, "verb", attrs.Verb, "path", attrs.Path, "reason", reason)
			request.WriteStatus(w, r, Forbidden(attrs, reason).Status())
		})
	}
}

// Forbidden is the error kube-apiserver answers a refused request with:
// 403, reason Forbidden, details naming the resource and object, and the
// message `<resource>[ "<name>"] is forbidden: <ForbiddenMessage>` (just
// `forbidden: ...` for a non-resource request).
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	msg := ForbiddenMessage(a, reason)
	if a.Resource == "" {
		return apierrors.FromStatus(api.Status{Status: api.StatusFailure, Code: http.StatusForbidden,
			Reason: api.StatusReasonForbidden, Message: "forbidden: " + msg,
			Details: &api.StatusDetails{Name: a.Name}})
	}
	return apierrors.NewForbidden(apierrors.GroupResource{Group: a.APIGroup, Resource: a.Resource}, a.Name, errors.New(msg))
}
