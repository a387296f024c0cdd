package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/server"
)

// TestHealthCheckAuthorization: /livez, /readyz and /healthz answer any
// authenticated user, as kube's system:public-info-viewer grants them,
// while a single check (root/NAME, ping among them) asks the authorizer
// first, as kube grants root/* only in system:monitoring: bob, whom the
// authorizer does not allow, gets 403, alice the check's answer.
func TestHealthCheckAuthorization(t *testing.T) {
	t.Parallel()
	s := server.New(server.Config{
		Authorizer: &recordingAuthorizer{},
		LiveChecks: []server.HealthCheck{{Name: "etcd", Check: func(context.Context) error { return nil }}},
		ReadyChecks: []server.HealthCheck{{Name: "broken", Check: func(context.Context) error {
			return errors.New("etcd at 10.0.0.1:2379: tls: bad certificate")
		}}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	h := s.HandlerChain(authn.Filter(bearerUsers{"alice": true, "bob": true}, authn.DefaultAnonymousPaths))
	tests := []struct {
		user, path string
		wantCode   int
	}{
		{"bob", "/livez", 200},
		{"bob", "/healthz", 200},
		{"bob", "/readyz", 500}, // the broken check, reason withheld
		{"", "/livez", 200},     // anonymous
		{"bob", "/livez/etcd", 403},
		{"bob", "/healthz/etcd", 403},
		{"bob", "/readyz/etcd", 403},
		{"bob", "/readyz/broken", 403},
		{"bob", "/livez/ping", 403},
		{"", "/livez/etcd", 401},
		{"alice", "/livez/etcd", 200},
		{"alice", "/healthz/etcd", 200},
		{"alice", "/readyz/etcd", 200},
		{"alice", "/livez/ping", 200},
		{"alice", "/readyz/broken", 500},
		{"alice", "/livez/nosuch", 404},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if tc.user != "" {
			req.Header.Set("Authorization", "Bearer "+tc.user)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.wantCode {
			t.Errorf("GET %s as %q: %d, want %d: %.300s", tc.path, tc.user, rec.Code, tc.wantCode, rec.Body)
		}
	}
}
