package server

import (
	"net/http"
	"strings"

	"github.com/minik8s/minik8s/apiserver/request"
)

// longRunning tells the requests that stay open as long as the client
// wants, which the in-flight limits and the request timeout leave alone:
// kube-apiserver's check (BasicLongRunningRequestCheck with the verbs
// watch and proxy and the subresources attach, exec, proxy, log and
// portforward, a pods/log without follow included), plus the profiler.
// It also keeps them out of the request latency figures, as kube's. A
// non-resource request's verb is its method, so only a resource request is
// long-running by its verb ("PROXY /metrics" is an ordinary request).
func longRunning(r *http.Request, info *request.Info) bool {
	if info == nil {
		return false
	}
	if info.IsResourceRequest {
		switch info.Verb {
		case "watch", "proxy":
			return true
		}
		switch info.Subresource {
		case "attach", "exec", "proxy", "log", "portforward":
			return true
		}
		return false
	}
	return strings.HasPrefix(r.URL.Path, "/debug/pprof/")
}
