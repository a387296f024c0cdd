package integration

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// userClient returns an HTTPS client with a certificate for user in groups.
func userClient(t *testing.T, s *apiservertest.Server, user string, groups ...string) *http.Client {
	t.Helper()
	certPEM, keyPEM, err := s.PKI().CA.IssueClient(user, groups, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return tlsClient(t, s.PKI().CA.CertPEM(), &cert)
}

func send(t *testing.T, hc *http.Client, method, url, body, contentType string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if contentType == "" {
		contentType = "application/json"
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRBACAllowsAndDeniesPerVerbResourceNamespace(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s) // the trusted local port
	admin.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "dev"}})
	admin.must(201, "POST", "/api/v1/namespaces/dev/pods", pod("p1", "c"))
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles", map[string]any{
		"metadata": map[string]any{"name": "pod-reader"},
		"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get", "list", "watch"}}},
	})
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "alice-reads"},
		"subjects": []any{map[string]any{"kind": "User", "name": "alice"}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
	})
	base := s.SecureURL()
	alice := userClient(t, s, "alice", "dev")
	waitFor(t, 5*time.Second, func() bool { return send(t, alice, "GET", base+"/api/v1/namespaces/dev/pods", "", "") == 200 })
	cases := []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/v1/namespaces/dev/pods/p1", 200},
		{"GET", "/api/v1/namespaces/default/pods", 403},
		{"GET", "/api/v1/pods", 403},
		{"DELETE", "/api/v1/namespaces/dev/pods/p1", 403},
		{"GET", "/api/v1/namespaces/dev/configmaps", 403},
		{"GET", "/api", 200}, // discovery is open to every authenticated user
		{"GET", "/version", 200},
	}
	for _, c := range cases {
		if got := send(t, alice, c.method, base+c.path, "", ""); got != c.want {
			t.Errorf("alice %s %s = %d, want %d", c.method, c.path, got, c.want)
		}
	}
	// A group binding grants through membership.
	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
		"metadata": map[string]any{"name": "dev-group-view"},
		"subjects": []any{map[string]any{"kind": "Group", "name": "dev"}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:kube-scheduler"},
	})
	waitFor(t, 5*time.Second, func() bool { return send(t, alice, "GET", base+"/api/v1/pods", "", "") == 200 })
	if got := send(t, alice, "DELETE", base+"/api/v1/namespaces/dev", "", ""); got != 403 {
		t.Errorf("delete a namespace after the scheduler-role binding = %d, want 403", got)
	}
}

func TestNodeAuthorizer(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	node := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name}}
	}
	admin.must(201, "POST", "/api/v1/nodes", node("node-b"))
	admin.must(201, "POST", "/api/v1/namespaces/default/pods", pod("on-b", "c"))
	admin.must(201, "POST", "/api/v1/namespaces/default/pods/on-b/binding", map[string]any{"metadata": map[string]any{"name": "on-b"}, "target": map[string]any{"name": "node-b"}})
	admin.must(201, "POST", "/api/v1/namespaces/default/pods", pod("on-a", "c"))
	admin.must(201, "POST", "/api/v1/namespaces/default/pods/on-a/binding", map[string]any{"metadata": map[string]any{"name": "on-a"}, "target": map[string]any{"name": "node-a"}})

	base := s.SecureURL()
	kubelet := userClient(t, s, "system:node:node-a", "system:nodes")
	if got := send(t, kubelet, "POST", base+"/api/v1/nodes", `{"metadata":{"name":"node-a"}}`, ""); got != 201 {
		t.Fatalf("node-a registers itself: %d", got)
	}
	waitFor(t, 5*time.Second, func() bool {
		return send(t, kubelet, "PATCH", base+"/api/v1/namespaces/default/pods/on-a/status", `{"status":{"phase":"Running"}}`, "application/merge-patch+json") == 200
	})
	cases := []struct {
		what, method, path, body, ct string
		want                         int
	}{
		{"read its node", "GET", "/api/v1/nodes/node-a", "", "", 200},
		{"patch its node", "PATCH", "/api/v1/nodes/node-a/status", `{"status":{"phase":"Running"}}`, "application/merge-patch+json", 200},
		{"patch another node", "PATCH", "/api/v1/nodes/node-b", `{"metadata":{"labels":{"x":"y"}}}`, "application/merge-patch+json", 403},
		{"patch another node's status", "PATCH", "/api/v1/nodes/node-b/status", `{"status":{"phase":"Running"}}`, "application/merge-patch+json", 403},
		{"status of a pod bound elsewhere", "PATCH", "/api/v1/namespaces/default/pods/on-b/status", `{"status":{"phase":"Running"}}`, "application/merge-patch+json", 403},
		{"delete a pod bound elsewhere", "DELETE", "/api/v1/namespaces/default/pods/on-b", "", "", 403},
		{"list pods", "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", "", "", 200},
		{"read secrets", "GET", "/api/v1/namespaces/kube-system/secrets", "", "", 403},
		{"its lease", "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", `{"metadata":{"name":"node-a"}}`, "", 201},
		{"another node's lease", "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", `{"metadata":{"name":"node-b"}}`, "", 403},
		// NodeRestriction admission:
		{"a restricted label on itself", "PATCH", "/api/v1/nodes/node-a", `{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"gold"}}}`, "application/merge-patch+json", 403},
		{"an allowed label on itself", "PATCH", "/api/v1/nodes/node-a", `{"metadata":{"labels":{"topology.kubernetes.io/zone":"z1"}}}`, "application/merge-patch+json", 200},
		{"delete its own node", "DELETE", "/api/v1/nodes/node-a", "", "", 403},
		{"create a normal pod", "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"sneaky"},"spec":{"nodeName":"node-a","containers":[{"name":"c","image":"x"}]}}`, "", 403},
	}
	for _, c := range cases {
		if got := send(t, kubelet, c.method, base+c.path, c.body, c.ct); got != c.want {
			t.Errorf("node-a %s (%s %s) = %d, want %d", c.what, c.method, c.path, got, c.want)
		}
	}
}
