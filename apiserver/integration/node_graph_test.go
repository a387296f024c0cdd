package integration

import (
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestNodeGraphFollowsPods checks that the Node authorizer's graph follows
// the pods watch: a kubelet reads a secret once a pod bound to it
// references it, and no longer once that pod is deleted and created again
// on another node, whose kubelet then reads it; a PersistentVolume
// follows its claim's pod the same way.
func TestNodeGraphFollowsPods(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	const ns = "/api/v1/namespaces/default"
	admin.must(201, "POST", ns+"/secrets", map[string]any{"metadata": map[string]any{"name": "db-password"}, "stringData": map[string]any{"pw": "x"}})
	admin.must(201, "POST", "/api/v1/persistentvolumes", map[string]any{"metadata": map[string]any{"name": "pv-db"},
		"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []string{"ReadWriteOnce"},
			"hostPath": map[string]any{"path": "/tmp/db"}, "claimRef": map[string]any{"namespace": "default", "name": "db-data"}}})
	dbPod := func(node string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": "db"}, "spec": map[string]any{"nodeName": node,
			"containers": []any{map[string]any{"name": "c", "image": "busybox",
				"env": []any{map[string]any{"name": "PW", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db-password", "key": "pw"}}}}}},
			"volumes": []any{map[string]any{"name": "data", "persistentVolumeClaim": map[string]any{"claimName": "db-data"}}}}}
	}
	base := s.SecureURL()
	// want waits until node reads the secret and the volume with code.
	want := func(step, node string, code int) {
		t.Helper()
		hc := userClient(t, s, "system:node:"+node, "system:nodes")
		eventually(t, step, func() error {
			secret, volume := send(t, hc, "GET", base+ns+"/secrets/db-password", "", ""), send(t, hc, "GET", base+"/api/v1/persistentvolumes/pv-db", "", "")
			if secret != code || volume != code {
				return fmt.Errorf("%s reads the pod's secret with %d and its volume with %d, want %d", node, secret, volume, code)
			}
			return nil
		})
	}
	want("no pod", "node-a", 403)

	admin.must(201, "POST", ns+"/pods", dbPod("node-a"))
	want("pod on node-a", "node-a", 200)
	want("pod on node-a", "node-b", 403)

	// A status update leaves the references as they are.
	admin.must(200, "PATCH", ns+"/pods/db/status", map[string]any{"status": map[string]any{"phase": "Running"}}, "application/merge-patch+json")
	want("status update", "node-a", 200)

	admin.must(200, "DELETE", ns+"/pods/db?gracePeriodSeconds=0", nil)
	want("pod deleted", "node-a", 403)

	admin.must(201, "POST", ns+"/pods", dbPod("node-b"))
	want("pod again, on node-b", "node-b", 200)
	want("pod moved to node-b", "node-a", 403)
}
