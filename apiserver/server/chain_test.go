package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/protobuf"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/server"
)

// bearerUsers authenticates "Authorization: Bearer NAME" as user NAME when
// NAME is a key; any other token is invalid.
type bearerUsers map[string]bool

func (u bearerUsers) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	tok, ok := authn.BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	if !u[tok] {
		return nil, false, authn.ErrInvalidBearerToken
	}
	return &request.User{Name: tok, Groups: []string{authn.AllAuthenticated}}, true, nil
}

// recordingAuthorizer allows alice only and records who it was asked about.
type recordingAuthorizer struct {
	mu    sync.Mutex
	asked []string
}

func (a *recordingAuthorizer) Authorize(_ context.Context, attrs authz.Attributes) (authz.Decision, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, attrs.User.Name)
	if attrs.User.Name == "alice" {
		return authz.Allow, "", nil
	}
	return authz.NoOpinion, "", nil
}

// TestHandlerChainOrder pins the order of the filters through what a
// request meets: authentication answers before authorization is asked,
// authorization before the handler runs, the panic recovery outside the
// audit filter (the panic is recorded, and the client still gets a
// Status), metrics inside authentication and outside authorization.
func TestHandlerChainOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, user string
		// accept, when set, is the Accept header: errors come back in
		// the encoding it negotiates, whichever filter answers.
		accept        string
		wantCode      int
		wantReason    api.StatusReason // "" for a success
		wantAsked     []string         // who the authorizer was asked about
		wantReached   bool             // the handler ran
		wantStage     string
		wantAuditUser string
		// wantCounted is whether apiserver_request_total counts the
		// request; not checked for the panic.
		wantCounted bool
	}{
		{name: "no credentials: 401, authorization never asked",
			method: "GET", path: "/openapi/v3", wantCode: 401, wantReason: api.StatusReasonUnauthorized,
			wantStage: audit.StageResponseComplete},
		{name: "invalid credentials: 401",
			method: "GET", path: "/openapi/v3", user: "mallory", wantCode: 401, wantReason: api.StatusReasonUnauthorized,
			wantStage: audit.StageResponseComplete},
		{name: "authenticated, not authorized: 403, handler never runs",
			method: "GET", path: "/openapi/v3", user: "bob", wantCode: 403, wantReason: api.StatusReasonForbidden,
			wantAsked: []string{"bob"}, wantStage: audit.StageResponseComplete, wantAuditUser: "bob", wantCounted: true},
		{name: "protobuf client without credentials: 401 in protobuf",
			method: "GET", path: "/api/v1/namespaces/default/pods", accept: protobuf.ContentType + ", application/json",
			wantCode: 401, wantReason: api.StatusReasonUnauthorized, wantStage: audit.StageResponseComplete},
		{name: "protobuf client not authorized: 403 in protobuf",
			method: "GET", path: "/api/v1/namespaces/default/pods", user: "bob", accept: protobuf.ContentType + ", application/json",
			wantCode: 403, wantReason: api.StatusReasonForbidden,
			wantAsked: []string{"bob"}, wantStage: audit.StageResponseComplete, wantAuditUser: "bob", wantCounted: true},
		{name: "authorized: the handler answers",
			method: "GET", path: "/openapi/v3", user: "alice", wantCode: 200,
			wantAsked: []string{"alice"}, wantReached: true, wantStage: audit.StageResponseComplete, wantAuditUser: "alice", wantCounted: true},
		{name: "anonymous health check: no authorization",
			method: "GET", path: "/healthz", wantCode: 200,
			wantStage: audit.StageResponseComplete, wantAuditUser: authn.Anonymous, wantCounted: true},
		{name: "panic: a 500 Status, audited as a panic",
			method: "GET", path: "/openapi/v2", user: "alice", wantCode: 500, wantReason: api.StatusReasonInternalError,
			wantAsked: []string{"alice"}, wantReached: true, wantStage: audit.StagePanic, wantAuditUser: "alice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var auditLog bytes.Buffer
			authorizer := &recordingAuthorizer{}
			reached := false
			metrics := prometheus.NewRegistry()
			s := server.New(server.Config{
				Authorizer: authorizer,
				Audit:      audit.NewBackend(&auditLog),
				OpenAPIV2: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
					reached = true
					panic("handler bug")
				}),
				OpenAPIV3: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					reached = true
					w.WriteHeader(http.StatusOK)
				}),
				Metrics: metrics,
				Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			h := s.HandlerChain(authn.Filter(bearerUsers{"alice": true, "bob": true}, authn.DefaultAnonymousPaths))

			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.user != "" {
				req.Header.Set("Authorization", "Bearer "+tc.user)
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != tc.wantCode {
				t.Fatalf("code %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			if tc.wantReason != "" {
				body := rec.Body.Bytes()
				if tc.accept != "" {
					if ct := rec.Header().Get("Content-Type"); ct != protobuf.ContentType {
						t.Fatalf("Content-Type %q, want %q", ct, protobuf.ContentType)
					}
					js, _, err := protobuf.Decode(body)
					if err != nil {
						t.Fatalf("decoding the protobuf Status: %v", err)
					}
					body = js
				}
				var st api.Status
				if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" || st.Reason != tc.wantReason || int(st.Code) != tc.wantCode {
					t.Errorf("body %q, want a Status with reason %s (err %v)", rec.Body, tc.wantReason, err)
				}
			}
			if strings.Join(authorizer.asked, ",") != strings.Join(tc.wantAsked, ",") {
				t.Errorf("authorizer asked about %q, want %q", authorizer.asked, tc.wantAsked)
			}
			if reached != tc.wantReached {
				t.Errorf("handler reached: %v, want %v", reached, tc.wantReached)
			}

			lines := strings.Split(strings.TrimSpace(auditLog.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("audit log: %d events, want 1:\n%s", len(lines), auditLog.String())
			}
			var ev audit.Event
			if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
				t.Fatalf("audit event %q: %v", lines[0], err)
			}
			if ev.Stage != tc.wantStage || ev.User.Username != tc.wantAuditUser || ev.ResponseStatus == nil ||
				int(ev.ResponseStatus.Code) != tc.wantCode || ev.ResponseStatus.Reason != tc.wantReason {
				t.Errorf("audit event %s: want stage %s, user %q, code %d, reason %q",
					lines[0], tc.wantStage, tc.wantAuditUser, tc.wantCode, tc.wantReason)
			}
			if id := rec.Header().Get(audit.HeaderAuditID); id == "" || id != ev.AuditID {
				t.Errorf("Audit-ID header %q, event's %q", id, ev.AuditID)
			}

			if got := requestsCounted(t, metrics); tc.wantStage != audit.StagePanic && got != tc.wantCounted {
				t.Errorf("counted in apiserver_request_total: %v, want %v", got, tc.wantCounted)
			}
		})
	}
}

// requestsCounted tells whether apiserver_request_total has any sample.
func requestsCounted(t *testing.T, reg *prometheus.Registry) bool {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() == "apiserver_request_total" {
			return len(f.GetMetric()) > 0
		}
	}
	return false
}
