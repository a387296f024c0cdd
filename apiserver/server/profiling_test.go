package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/server"
)

// TestProfiling: with Profiling, /debug/pprof/ serves Go's profiles to a
// user the authorizer allows (the non-resource URL, as kube-apiserver's
// --profiling) and 403 to another; without it, 404 even to that user.
func TestProfiling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		profiling bool
		user      string
		path      string
		wantCode  int
		wantBody  string
	}{
		{"index, allowed", true, "alice", "/debug/pprof/", 200, "heap"},
		{"no trailing slash: redirected", true, "alice", "/debug/pprof", 302, ""},
		{"named profile, allowed", true, "alice", "/debug/pprof/goroutine?debug=1", 200, "goroutine profile: total"},
		{"symbol, allowed", true, "alice", "/debug/pprof/symbol", 200, "num_symbols"},
		{"not authorized: 403", true, "bob", "/debug/pprof/heap", 403, ""},
		{"profiling off: 404", false, "alice", "/debug/pprof/heap", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := server.New(server.Config{
				Authorizer: &recordingAuthorizer{},
				Profiling:  tc.profiling,
				Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			h := s.HandlerChain(authn.Filter(bearerUsers{"alice": true, "bob": true}, authn.DefaultAnonymousPaths))
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			req.Header.Set("Authorization", "Bearer "+tc.user)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("GET %s as %s: %d, want %d: %s", tc.path, tc.user, rec.Code, tc.wantCode, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("GET %s: body lacks %q: %.300s", tc.path, tc.wantBody, rec.Body)
			}
			if tc.wantCode == 302 && rec.Header().Get("Location") != "/debug/pprof/" {
				t.Fatalf("redirect to %q", rec.Header().Get("Location"))
			}
		})
	}
}
