package server

import (
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/go-chi/chi/v5"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/warning"
)

// HandlerChain returns the routes behind every filter a request passes, in
// kube-apiserver's order (its DefaultBuildHandlerChain). Read it bottom-up:
// the last filter wrapped is the first one a request meets. authenticate
// is the listener's way of knowing the user: authn.Filter on the secure
// port, a fixed trusted user on the local plain-HTTP port; it must put the
// user in the request context or answer 401 itself.
//
// Each listener gets its own chain around the same routes, metrics,
// in-flight limits and audit log; nothing else in the apiserver wraps a
// handler.
func (s *Server) HandlerChain(authenticate func(http.Handler) http.Handler) http.Handler {
	// The routes; admission runs inside the write handlers (registry.Store)
	// once the object is decoded.
	h := http.Handler(s.router)
	h = s.withAuthorization(h) // 403 Forbidden; on the API routes only
	h = s.withBodyLimit(h)     // 413 RequestEntityTooLarge
	// kube-apiserver's max-in-flight limit, as with
	// --enable-priority-and-fairness=false (priority and fairness is not
	// implemented): 429, for the impersonated user.
	h = s.withMaxInFlight(h)
	h = s.withMetrics(h)                              // apiserver_request_total (the 429s too), _duration_seconds
	h = withImpersonation(s.cfg.Authorizer, s.log)(h) // Impersonate-*: 403, or the request as that user
	h = audit.Capture(h)                              // hands the user to the audit event
	h = authenticate(h)                               // 401 Unauthorized; the user into the context
	h = audit.Filter(s.cfg.Audit)(h)                  // one event per request, Audit-ID header
	h = warning.Filter(h)                             // Warning headers from admission; inside the timeout, which owns the headers
	h = s.withTimeout(h)                              // 504 at the deadline; the handler goes on on its own goroutine
	h = s.withRequestDeadline(h)                      // the deadline: --request-timeout, or ?timeout= when shorter
	h = withRequestInfo(h)                            // verb, resource, namespace, name from the URL
	h = s.withPanicRecovery(h)                        // a panic below becomes a 500 Status
	return h
}

// withPanicRecovery answers a panicking handler with a 500 Status, after
// the audit filter has recorded it. http.ErrAbortHandler, the deliberate
// way to abort a response, goes on to net/http.
func (s *Server) withPanicRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				stack := debug.Stack()
				if hp, ok := v.(*handlerPanic); ok { // from withTimeout's goroutine
					v, stack = hp.value, hp.stack
				}
				s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(stack))
				writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// withRequestInfo parses what the request addresses into its context, for
// audit, authorization, metrics and the handlers, with the writer the
// filters answer errors with (negotiated, as the handlers' errors are).
func withRequestInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := request.ParseInfo(r)
		ctx := request.WithStatusWriter(request.WithInfo(r.Context(), info), writeStatus)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// withBodyLimit refuses a body declared larger than MaxRequestBytes and
// cuts one that turns out larger while read.
func (s *Server) withBodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.MaxRequestBytes {
			writeError(w, r, apierrors.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", s.cfg.MaxRequestBytes)))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// withAuthorization asks the authorizer about every request for an API
// route (apiRoutes: /metrics, the single health checks, discovery,
// resources, OpenAPI). /healthz, /livez, /readyz and /version, and paths
// that are not served (404, 405), are answered to any authenticated user
// without it.
func (s *Server) withAuthorization(next http.Handler) http.Handler {
	authorized := authz.Filter(s.cfg.Authorizer)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.isAPIRoute(r) {
			authorized.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isAPIRoute tells whether r reaches one of apiRoutes, matched as the
// router matches it.
func (s *Server) isAPIRoute(r *http.Request) bool {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	if path == "" {
		path = "/"
	}
	return s.api.Match(chi.NewRouteContext(), r.Method, path)
}
