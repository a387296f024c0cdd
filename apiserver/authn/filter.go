package authn

import (
	"log/slog"
	"net/http"
	"slices"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
)

// DefaultAnonymousPaths are the paths a request without credentials may
// reach: the health checks and the version.
var DefaultAnonymousPaths = []string{"/healthz", "/livez", "/readyz", "/version"}

// Filter authenticates every request with a (nil: none configured). On
// success the user goes into the request context (request.WithUser) and the
// Authorization header is removed, so no handler is ever tempted to pass the
// credential on. A request without credentials whose path is exactly one of
// allowAnonymousPaths (any query, so /healthz?verbose; not /healthz/etcd)
// continues as system:anonymous in system:unauthenticated. Everything else
// gets 401 with a Kubernetes Status, including invalid credentials on an
// anonymous path, as in Kubernetes: bad credentials are never downgraded to
// anonymous.
func Filter(a Authenticator, allowAnonymousPaths []string) func(http.Handler) http.Handler {
	anon := slices.Clone(allowAnonymousPaths)
	log := slog.Default().With("component", "authn")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var (
				u   *request.User
				ok  bool
				err error
			)
			if a != nil {
				u, ok, err = a.AuthenticateRequest(r)
			}
			switch {
			case ok && err == nil:
				r.Header.Del("Authorization")
				next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
			case err == nil && slices.Contains(anon, r.URL.Path):
				u = &request.User{Name: Anonymous, Groups: []string{AllUnauthenticated}}
				next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), u)))
			default:
				if err != nil {
					log.Info("unable to authenticate the request", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
				}
				writeUnauthorized(w, r)
			}
		})
	}
}

// writeUnauthorized answers like kube-apiserver: a Status with the bare
// message "Unauthorized", whatever the reason.
func writeUnauthorized(w http.ResponseWriter, r *http.Request) {
	request.WriteStatus(w, r, apierrors.NewUnauthorized("Unauthorized").Status())
}
