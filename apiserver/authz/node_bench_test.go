package authz

import (
	"context"
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
)

// benchPod is pod i on node: a service account, a pull secret, an env
// secret, a config map and a claim of its own.
func benchPod(i int, node string) *api.Pod {
	n := fmt.Sprintf("%s-%d", node, i)
	return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "pod-" + n},
		Spec: api.PodSpec{NodeName: node, ServiceAccountName: "sa-" + n,
			ImagePullSecrets: []api.LocalObjectReference{{Name: "pull-" + n}},
			Volumes: []api.Volume{
				{Name: "cfg", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "cm-" + n}}}},
				{Name: "data", VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "pvc-" + n}}}},
			Containers: []api.Container{{Name: "c", Image: "busybox", Env: []api.EnvVar{{Name: "PW", ValueFrom: &api.EnvVarSource{
				SecretKeyRef: &api.SecretKeySelector{LocalObjectReference: api.LocalObjectReference{Name: "secret-" + n}, Key: "pw"}}}}}}}}
}

// benchChecks are 10,000 checks by node-a: the secrets, config maps,
// claims, service accounts and pods of its pods (allowed) and of node-b's
// (not).
func benchChecks() []Attributes {
	u := &request.User{Name: "system:node:node-a", Groups: []string{NodesGroup, AllAuthenticated}}
	var out []Attributes
	for i := 0; len(out) < 10000; i++ {
		node := []string{"node-a", "node-b"}[i%2]
		n := fmt.Sprintf("%s-%d", node, (i/2)%100)
		out = append(out,
			res(u, "get", "", "secrets", "", "default", "secret-"+n),
			res(u, "get", "", "configmaps", "", "default", "cm-"+n),
			res(u, "get", "", "persistentvolumeclaims", "", "default", "pvc-"+n),
			res(u, "create", "", "serviceaccounts", "token", "default", "sa-"+n),
			res(u, "get", "", "pods", "", "default", "pod-"+n))
	}
	return out[:10000]
}

// BenchmarkNodeAuthorizer: 100 pods on the node checked and 100 on
// another; one op is 10,000 checks. (Before the graph, when each check
// decoded the node's pods from the watch cache's encodings, an op took
// about 51 s on a loaded 2-core machine: 5.1 ms a check.)
func BenchmarkNodeAuthorizer(b *testing.B) {
	g := NewNodeGraph()
	for i := range 100 {
		for _, node := range []string{"node-a", "node-b"} {
			g.SetPod(benchPod(i, node))
		}
	}
	az := NewNode(g, &testGraph{})
	checks := benchChecks()
	ctx := context.Background()
	allowed := 0
	for b.Loop() {
		allowed = 0
		for _, a := range checks {
			if d, _, _ := az.Authorize(ctx, a); d == Allow {
				allowed++
			}
		}
	}
	if allowed != 5000 {
		b.Fatalf("%d of 10000 checks allowed, want 5000", allowed)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(checks)), "ns/check")
}
