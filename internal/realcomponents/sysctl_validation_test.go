package realcomponents

import (
	"net/http"
	"testing"
)

// TestPodSysctlValidationAsKube sends kube-apiserver v1.37 and minik8s the
// pod of the conformance spec '[sig-node] Sysctls should reject invalid
// sysctls' and compares the refusals: the malformed names are Invalid, the
// unsafe but well-formed ones are left to the kubelet.
func TestPodSysctlValidationAsKube(t *testing.T) {
	both := startBoth(t)
	for _, e := range both.each() {
		if code, out := e.do(t, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: service account: %d %v", e.name, code, out)
		}
	}
	both.sameRefusal(t, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"sysctl"},"spec":{"automountServiceAccountToken":false,
		"securityContext":{"sysctls":[{"name":"foo-","value":"bar"},{"name":"kernel.shmmax","value":"100000000"},
			{"name":"safe-and-unsafe","value":"100000000"},{"name":"bar..","value":"42"}]},
		"containers":[{"name":"c","image":"busybox"}]}}`)
	both.must(t, http.StatusCreated, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"unsafe"},"spec":{"automountServiceAccountToken":false,
		"securityContext":{"sysctls":[{"name":"kernel.shmmax","value":"100000000"},{"name":"net/ipv4/ip_local_port_range","value":"1024 65535"}]},
		"containers":[{"name":"c","image":"busybox"}]}}`)
}
