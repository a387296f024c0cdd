package authz

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// serve runs one request through Filter(az) with the parsed request and
// user in its context, as the server and authentication filters put them.
func serve(az Authorizer, method, url string, u *request.User) (*httptest.ResponseRecorder, bool) {
	reached := false
	h := Filter(az)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached = true
		w.WriteHeader(http.StatusTeapot)
	}))
	r := httptest.NewRequest(method, url, nil)
	ctx := request.WithInfo(r.Context(), request.ParseInfo(r))
	if u != nil {
		ctx = request.WithUser(ctx, u)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.WithContext(ctx))
	return w, reached
}

func decodeStatus(t *testing.T, w *httptest.ResponseRecorder) api.Status {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var st api.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	return st
}

func TestFilter(t *testing.T) {
	t.Parallel()
	az := Union(newTestNode(), NewRBAC(testRBACSource()))
	bob := &request.User{Name: "bob", Groups: []string{AllAuthenticated}}
	alice := &request.User{Name: "alice", Groups: []string{AllAuthenticated}}
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{NodesGroup}}
	tests := []struct {
		name        string
		method, url string
		user        *request.User
		// k8s is the error kube-apiserver answers with, built with
		// Kubernetes' own constructors from the same parts.
		k8s *k8serrors.StatusError
	}{
		{"allowed", "GET", "/api/v1/namespaces/default/pods", alice, nil},
		{"named object", "GET", "/api/v1/namespaces/default/pods/x", bob,
			k8serrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x",
				errors.New(`User "bob" cannot get resource "pods" in API group "" in the namespace "default"`))},
		{"collection", "GET", "/api/v1/namespaces/default/pods", bob,
			k8serrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
				errors.New(`User "bob" cannot list resource "pods" in API group "" in the namespace "default"`))},
		{"cluster scope, group", "DELETE", "/apis/apps/v1/deployments", bob,
			k8serrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "",
				errors.New(`User "bob" cannot deletecollection resource "deployments" in API group "apps" at the cluster scope`))},
		{"subresource", "PUT", "/apis/apps/v1/namespaces/ns/deployments/web/scale", alice,
			k8serrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web",
				errors.New(`User "alice" cannot update resource "deployments/scale" in API group "apps" in the namespace "ns"`))},
		{"non-resource", "GET", "/metrics", bob,
			k8serrors.NewForbidden(schema.GroupResource{}, "", errors.New(`User "bob" cannot get path "/metrics"`))},
		{"node refused, with the reason", "GET", "/api/v1/nodes/node-b", nodeA,
			k8serrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "node-b",
				errors.New(`User "system:node:node-a" cannot get resource "nodes" in API group "" at the cluster scope: node 'node-a' cannot read 'node-b', only its own Node object`))},
		{"node listing every pod", "GET", "/api/v1/pods", nodeA,
			k8serrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
				errors.New(`User "system:node:node-a" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector`))},
		{"node listing its pods", "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", nodeA, nil},
	}
	for _, tc := range tests {
		w, reached := serve(az, tc.method, tc.url, tc.user)
		if tc.k8s == nil {
			if !reached || w.Code != http.StatusTeapot {
				t.Errorf("%s: not passed on (%d %s)", tc.name, w.Code, w.Body)
			}
			continue
		}
		if reached {
			t.Errorf("%s: reached the handler", tc.name)
			continue
		}
		if w.Code != http.StatusForbidden {
			t.Errorf("%s: code %d", tc.name, w.Code)
		}
		st := decodeStatus(t, w)
		want := tc.k8s.ErrStatus
		if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != want.Status || string(st.Reason) != string(want.Reason) ||
			st.Code != want.Code || st.Message != want.Message {
			t.Errorf("%s: got %+v\nwant %+v", tc.name, st, want)
		}
		if st.Details == nil || st.Details.Name != want.Details.Name || st.Details.Group != want.Details.Group || st.Details.Kind != want.Details.Kind {
			t.Errorf("%s: details %+v, want %+v", tc.name, st.Details, want.Details)
		}
	}
}

func TestFilterFailures(t *testing.T) {
	t.Parallel()
	failing := AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) {
		return NoOpinion, "", errors.New("rule store unavailable")
	})
	alice := &request.User{Name: "alice"}
	w, reached := serve(failing, "GET", "/api/v1/pods", alice)
	if reached || w.Code != http.StatusInternalServerError {
		t.Fatalf("error: %d reached=%t", w.Code, reached)
	}
	if st := decodeStatus(t, w); st.Reason != api.StatusReasonInternalError || st.Message != "Internal error occurred: rule store unavailable" {
		t.Errorf("error status %+v", st)
	}
	// An allow wins over another authorizer's error.
	if w, reached := serve(Union(failing, AlwaysAllow), "GET", "/api/v1/pods", alice); !reached || w.Code != http.StatusTeapot {
		t.Errorf("allow after an error: %d", w.Code)
	}
	// Without a user (authentication not run) nothing gets through.
	w, reached = serve(AlwaysAllow, "GET", "/api/v1/pods", nil)
	if reached || w.Code != http.StatusInternalServerError {
		t.Errorf("no user: %d reached=%t", w.Code, reached)
	}
	// Nor without the parsed request.
	h := Filter(AlwaysAllow)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("reached") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/pods", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("no request info: %d", rec.Code)
	}
}
