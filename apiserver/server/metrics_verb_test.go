package server

import (
	"net/http/httptest"
	"testing"

	"github.com/minik8s/minik8s/apiserver/request"
)

// TestReportedVerb: the verb label of apiserver_request_total and
// apiserver_request_duration_seconds is kube-apiserver's (CanonicalVerb and
// CleanVerb): methods in upper case, LIST, WATCH, APPLY and CONNECT.
func TestReportedVerb(t *testing.T) {
	for _, tc := range []struct {
		method, path, contentType string
		info                      *request.Info
		want                      string
	}{
		{"GET", "/api/v1/namespaces/a/pods/p", "", &request.Info{IsResourceRequest: true, Verb: "get", Namespace: "a", Name: "p", Resource: "pods"}, "GET"},
		{"GET", "/api/v1/namespaces/a/pods", "", &request.Info{IsResourceRequest: true, Verb: "list", Namespace: "a", Resource: "pods"}, "LIST"},
		{"GET", "/api/v1/nodes", "", &request.Info{IsResourceRequest: true, Verb: "list", Resource: "nodes"}, "LIST"},
		{"HEAD", "/api/v1/nodes/n", "", &request.Info{IsResourceRequest: true, Verb: "get", Name: "n", Resource: "nodes"}, "GET"},
		{"GET", "/api/v1/pods?watch=true", "", &request.Info{IsResourceRequest: true, Verb: "watch", Resource: "pods"}, "WATCH"},
		{"POST", "/api/v1/namespaces/a/pods", "application/json", &request.Info{IsResourceRequest: true, Verb: "create", Namespace: "a", Resource: "pods"}, "POST"},
		{"PUT", "/api/v1/namespaces/a/pods/p/status", "application/json", &request.Info{IsResourceRequest: true, Verb: "update", Namespace: "a", Name: "p", Resource: "pods", Subresource: "status"}, "PUT"},
		{"PATCH", "/api/v1/namespaces/a/pods/p", "application/merge-patch+json", &request.Info{IsResourceRequest: true, Verb: "patch", Namespace: "a", Name: "p", Resource: "pods"}, "PATCH"},
		{"PATCH", "/api/v1/namespaces/a/pods/p", "application/apply-patch+yaml", &request.Info{IsResourceRequest: true, Verb: "patch", Namespace: "a", Name: "p", Resource: "pods"}, "APPLY"},
		{"DELETE", "/api/v1/namespaces/a/pods", "", &request.Info{IsResourceRequest: true, Verb: "deletecollection", Namespace: "a", Resource: "pods"}, "DELETE"},
		{"GET", "/api/v1/namespaces/a/pods/p/log", "", &request.Info{IsResourceRequest: true, Verb: "get", Namespace: "a", Name: "p", Resource: "pods", Subresource: "log"}, "CONNECT"},
		{"POST", "/api/v1/namespaces/a/pods/p/exec", "", &request.Info{IsResourceRequest: true, Verb: "create", Namespace: "a", Name: "p", Resource: "pods", Subresource: "exec"}, "CONNECT"},
		{"GET", "/healthz", "", &request.Info{Verb: "get", Path: "/healthz"}, "GET"},
		{"GET", "/healthz", "", nil, "GET"},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		if got, _ := reportedVerb(r, tc.info); got != tc.want {
			t.Errorf("%s %s (%s): verb %q, want %q", tc.method, tc.path, tc.contentType, got, tc.want)
		}
	}
}
