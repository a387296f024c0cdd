package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
)

// The impersonation headers, as client-go and kubectl (--as, --as-group,
// --as-uid) send them.
const (
	ImpersonateUserHeader            = "Impersonate-User"
	ImpersonateGroupHeader           = "Impersonate-Group"
	ImpersonateUIDHeader             = "Impersonate-Uid"
	ImpersonateUserExtraHeaderPrefix = "Impersonate-Extra-"
)

// impersonation is one thing a request asks to act as, and the attributes
// of the "impersonate" check it needs.
type impersonation struct {
	attrs authz.Attributes
	// set applies it to the user being built.
	set func(u *request.User)
}

// withImpersonation is kube-apiserver's WithImpersonation: a request with
// Impersonate-* headers continues as the user they name, once the
// authorizer allows its authenticated user the "impersonate" verb on each
// of them: users (or serviceaccounts, for a service account's user name),
// groups, uids, and userextras/KEY for each extra value. Anything refused
// is a 403 in kube's words (`users "bob" is forbidden: User "alice" cannot
// impersonate resource "users" in API group "" at the cluster scope`). The
// audit event keeps the authenticated user and records the impersonated
// one; the headers are removed before the request goes on.
func withImpersonation(a authz.Authorizer, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reqs, err := impersonationRequests(r.Header)
			if err != nil {
				writeError(w, r, apierrors.NewInternalError(err))
				return
			}
			if len(reqs) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			requestor, ok := request.UserFrom(ctx)
			if !ok {
				writeError(w, r, apierrors.NewInternalError(errors.New("no user found for request")))
				return
			}
			groupsSpecified := len(r.Header.Values(ImpersonateGroupHeader)) > 0
			u := &request.User{Groups: []string{}, Extra: map[string][]string{}}
			for _, imp := range reqs {
				imp.attrs.User = requestor
				d, reason, err := a.Authorize(ctx, imp.attrs)
				if err != nil || d != authz.Allow {
					log.Debug("impersonation forbidden", "user", requestor.Name, "resource", imp.attrs.Resource, "name", imp.attrs.Name, "reason", reason, "err", err)
					writeError(w, r, authz.Forbidden(imp.attrs, reason))
					return
				}
				imp.set(u)
			}
			if ns, _, ok := serviceAccountName(u.Name); ok && !groupsSpecified {
				// A service account's groups are fixed by its name.
				u.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
			}
			if u.Name != "system:anonymous" {
				// The impersonated user is authenticated unless the groups
				// say otherwise.
				if !slices.Contains(u.Groups, authz.AllAuthenticated) && !slices.Contains(u.Groups, authz.AllUnauthenticated) {
					u.Groups = append(u.Groups, authz.AllAuthenticated)
				}
			} else if !slices.Contains(u.Groups, authz.AllUnauthenticated) {
				u.Groups = append(u.Groups, authz.AllUnauthenticated)
			}
			if len(u.Extra) == 0 {
				u.Extra = nil
			}
			audit.LogImpersonatedUser(ctx, u)
			r = r.WithContext(request.WithUser(ctx, u))
			r.Header.Del(ImpersonateUserHeader)
			r.Header.Del(ImpersonateGroupHeader)
			r.Header.Del(ImpersonateUIDHeader)
			for h := range r.Header {
				if strings.HasPrefix(h, ImpersonateUserExtraHeaderPrefix) {
					r.Header.Del(h)
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// impersonationRequests reads the headers into the checks they need, in
// kube's order: the user, each group, each extra value, the uid. Groups,
// extras or a uid without a user are an error.
func impersonationRequests(h http.Header) ([]impersonation, error) {
	var out []impersonation
	name := h.Get(ImpersonateUserHeader)
	if name != "" {
		attrs := authz.Attributes{Verb: "impersonate", Resource: "users", Name: name, IsResourceRequest: true}
		if ns, sa, ok := serviceAccountName(name); ok {
			attrs.Resource, attrs.Namespace, attrs.Name = "serviceaccounts", ns, sa
		}
		out = append(out, impersonation{attrs: attrs, set: func(u *request.User) { u.Name = name }})
	}
	var described []string
	for _, g := range h.Values(ImpersonateGroupHeader) {
		described = append(described, "Group "+g)
		out = append(out, impersonation{
			attrs: authz.Attributes{Verb: "impersonate", Resource: "groups", Name: g, IsResourceRequest: true},
			set:   func(u *request.User) { u.Groups = append(u.Groups, g) }})
	}
	var extraHeaders []string
	for k := range h {
		if strings.HasPrefix(k, ImpersonateUserExtraHeaderPrefix) {
			extraHeaders = append(extraHeaders, k)
		}
	}
	slices.Sort(extraHeaders)
	for _, k := range extraHeaders {
		key := strings.ToLower(k[len(ImpersonateUserExtraHeaderPrefix):])
		if unescaped, err := url.PathUnescape(key); err == nil {
			key = unescaped
		}
		for _, v := range h[k] {
			described = append(described, "UserExtra "+key+"="+v)
			out = append(out, impersonation{
				attrs: authz.Attributes{Verb: "impersonate", APIGroup: "authentication.k8s.io", APIVersion: "v1",
					Resource: "userextras", Subresource: key, Name: v, IsResourceRequest: true},
				set: func(u *request.User) { u.Extra[key] = append(u.Extra[key], v) }})
		}
	}
	if uid := h.Get(ImpersonateUIDHeader); uid != "" {
		described = append(described, "UID "+uid)
		out = append(out, impersonation{
			attrs: authz.Attributes{Verb: "impersonate", APIGroup: "authentication.k8s.io", APIVersion: "v1",
				Resource: "uids", Name: uid, IsResourceRequest: true},
			set: func(u *request.User) { u.UID = uid }})
	}
	if name == "" && len(described) > 0 {
		return nil, fmt.Errorf("requested %v without impersonating a user", described)
	}
	return out, nil
}

// serviceAccountName splits "system:serviceaccount:NS:NAME".
func serviceAccountName(user string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, authz.ServiceAccountUserPrefix)
	if !ok {
		return "", "", false
	}
	ns, name, ok = strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return ns, name, true
}
