package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/audit"
	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/apiserver/server"
)

// impersonators lets alice impersonate anything but uids, and anyone do
// anything else; it records the impersonate checks.
type impersonators struct{ checks []string }

func (a *impersonators) Authorize(_ context.Context, attrs authz.Attributes) (authz.Decision, string, error) {
	if attrs.Verb != "impersonate" {
		return authz.Allow, "", nil
	}
	a.checks = append(a.checks, fmt.Sprintf("%s %s/%s %s/%s", attrs.User.Name, attrs.APIGroup, attrs.Resource, attrs.Namespace, attrs.Name))
	if attrs.User.Name == "alice" && attrs.Resource != "uids" {
		return authz.Allow, "", nil
	}
	return authz.NoOpinion, "", nil
}

// TestImpersonation pins kube-apiserver's impersonation filter: each
// Impersonate-* header checked with the impersonate verb, the request
// continuing as the user they name (groups completed as kube completes
// them), the audit event keeping who authenticated, and kube's 403 and
// 500 otherwise.
func TestImpersonation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		user       string
		headers    map[string][]string
		wantCode   int
		wantMsg    string // of the Status, when refused
		wantUser   string // who the handler sees: name [groups] uid extra
		wantChecks []string
	}{
		{name: "user, groups and extras",
			user: "alice", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"g1", "g2"}, "Impersonate-Extra-Scopes": {"a", "b"}},
			wantCode: 200, wantUser: "bob [g1 g2 system:authenticated]  map[scopes:[a b]]",
			wantChecks: []string{"alice /users /bob", "alice /groups /g1", "alice /groups /g2", "alice authentication.k8s.io/userextras /a", "alice authentication.k8s.io/userextras /b"}},
		{name: "a service account gets its groups",
			user: "alice", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:ns1:sa"}},
			wantCode: 200, wantUser: "system:serviceaccount:ns1:sa [system:serviceaccounts system:serviceaccounts:ns1 system:authenticated]  map[]",
			wantChecks: []string{"alice /serviceaccounts ns1/sa"}},
		{name: "anonymous stays unauthenticated",
			user: "alice", headers: map[string][]string{"Impersonate-User": {"system:anonymous"}},
			wantCode: 200, wantUser: "system:anonymous [system:unauthenticated]  map[]", wantChecks: []string{"alice /users /system:anonymous"}},
		{name: "system:unauthenticated given: system:authenticated not added",
			user: "alice", headers: map[string][]string{"Impersonate-User": {"x"}, "Impersonate-Group": {"system:unauthenticated"}},
			wantCode: 200, wantUser: "x [system:unauthenticated]  map[]", wantChecks: []string{"alice /users /x", "alice /groups /system:unauthenticated"}},
		{name: "no impersonate verb: 403 in kube's words",
			user: "bob", headers: map[string][]string{"Impersonate-User": {"carol"}},
			wantCode: 403, wantMsg: `users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope`,
			wantChecks: []string{"bob /users /carol"}},
		{name: "each part is checked: a uid refused",
			user: "alice", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Uid": {"42"}},
			wantCode: 403, wantMsg: `uids.authentication.k8s.io "42" is forbidden: User "alice" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`,
			wantChecks: []string{"alice /users /bob", "alice authentication.k8s.io/uids /42"}},
		{name: "groups without a user: 500",
			user: "alice", headers: map[string][]string{"Impersonate-Group": {"g1"}},
			wantCode: 500, wantMsg: "Internal error occurred: requested [Group g1] without impersonating a user"},
		{name: "no headers: the authenticated user",
			user: "alice", wantCode: 200, wantUser: "alice [system:authenticated]  map[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var auditLog bytes.Buffer
			az := &impersonators{}
			var seen string
			var leftover []string
			s := server.New(server.Config{
				Authorizer: az,
				Audit:      audit.NewBackend(&auditLog),
				OpenAPIV3: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					u, _ := request.UserFrom(r.Context())
					seen = fmt.Sprintf("%s %v %s %v", u.Name, u.Groups, u.UID, u.Extra)
					for h := range r.Header {
						if strings.HasPrefix(h, "Impersonate-") {
							leftover = append(leftover, h)
						}
					}
				}),
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			h := s.HandlerChain(authn.Filter(bearerUsers{"alice": true, "bob": true}, nil))
			req := httptest.NewRequest("GET", "/openapi/v3", nil)
			req.Header.Set("Authorization", "Bearer "+tc.user)
			for k, vs := range tc.headers {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("code %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			if tc.wantMsg != "" {
				var st api.Status
				if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Message != tc.wantMsg {
					t.Errorf("message %q, want %q (%v)", st.Message, tc.wantMsg, err)
				}
			}
			if seen != tc.wantUser {
				t.Errorf("handler saw %q, want %q", seen, tc.wantUser)
			}
			if len(leftover) > 0 {
				t.Errorf("impersonation headers reached the handler: %v", leftover)
			}
			if strings.Join(az.checks, ", ") != strings.Join(tc.wantChecks, ", ") {
				t.Errorf("checks %q, want %q", az.checks, tc.wantChecks)
			}
			var ev audit.Event
			if err := json.Unmarshal(auditLog.Bytes(), &ev); err != nil {
				t.Fatalf("audit %q: %v", auditLog.String(), err)
			}
			if ev.User.Username != tc.user {
				t.Errorf("audit user %q, want who authenticated, %q", ev.User.Username, tc.user)
			}
			wantImp := ""
			if tc.wantCode == 200 && len(tc.headers) > 0 {
				wantImp = strings.Fields(tc.wantUser)[0]
			}
			if got := ev.ImpersonatedUser; (got == nil) != (wantImp == "") || got != nil && got.Username != wantImp {
				t.Errorf("audit impersonatedUser %+v, want %q", got, wantImp)
			}
		})
	}
}
