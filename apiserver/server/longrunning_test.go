package server

import (
	"net/http/httptest"
	"testing"

	"github.com/minik8s/minik8s/apiserver/request"
)

// TestLongRunning: the requests the limits and the timeout leave alone are
// kube's long-running ones; a non-resource request is not long-running by
// its method, whatever that method is called.
func TestLongRunning(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		method, url string
		want        bool
	}{
		{"GET", "/api/v1/pods?watch=true", true},
		{"GET", "/api/v1/watch/namespaces/default/pods", true},
		{"GET", "/apis/metrics.k8s.io/v1beta1/pods?watch=True", true},
		{"GET", "/api/v1/namespaces/default/pods/web/log", true},
		{"POST", "/api/v1/namespaces/default/pods/web/exec", true},
		{"GET", "/api/v1/namespaces/default/pods/web/portforward", true},
		{"GET", "/api/v1/pods", false},
		{"GET", "/api/v1/namespaces/default/pods/web", false},
		{"POST", "/api/v1/namespaces/default/pods", false},
		{"GET", "/metrics", false},
		{"PROXY", "/metrics", false},
		{"WATCH", "/healthz", false},
		{"GET", "/debug/pprof/profile", true},
	} {
		r := httptest.NewRequest(tt.method, tt.url, nil)
		if got := longRunning(r, request.ParseInfo(r)); got != tt.want {
			t.Errorf("%s %s: long-running %v, want %v", tt.method, tt.url, got, tt.want)
		}
	}
}
