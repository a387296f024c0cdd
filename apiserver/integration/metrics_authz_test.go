package integration

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestMetricsNeedsTheRight: /metrics answers only users who may get the
// path (issue 26 item 10): a user without the right gets 403 while the
// health checks stay open to him; a member of system:monitoring (kube's
// bootstrap role, bound to the group of that name), a user bound to the
// role and system:masters get the metrics.
func TestMetricsNeedsTheRight(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	base := s.SecureURL()

	alice := userClient(t, s, "alice", "dev")
	for _, c := range []struct {
		path string
		want int
	}{{"/metrics", 403}, {"/healthz", 200}, {"/readyz", 200}, {"/livez", 200}, {"/version", 200}} {
		if got := send(t, alice, "GET", base+c.path, "", ""); got != c.want {
			t.Errorf("alice GET %s = %d, want %d", c.path, got, c.want)
		}
	}
	for _, who := range []struct {
		user   string
		groups []string
	}{{"prometheus", []string{"system:monitoring"}}, {"kubernetes-admin", []string{"system:masters"}}} {
		if got := send(t, userClient(t, s, who.user, who.groups...), "GET", base+"/metrics", "", ""); got != 200 {
			t.Errorf("%s %v GET /metrics = %d, want 200", who.user, who.groups, got)
		}
	}

	admin.must(201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
		"metadata": map[string]any{"name": "alice-monitoring"},
		"subjects": []any{map[string]any{"kind": "User", "name": "alice"}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:monitoring"},
	})
	waitFor(t, 5*time.Second, func() bool { return send(t, alice, "GET", base+"/metrics", "", "") == 200 })
}
