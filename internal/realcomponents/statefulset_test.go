package realcomponents

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestStatefulSetUpdatesAsKube sends the same StatefulSet updates to the
// real kube-apiserver v1.37 and to minik8s' apiserver: each change of a
// field kube forbids updating (serviceName, podManagementPolicy, selector,
// volumeClaimTemplates, alone and together) is refused with identical
// answers (422, message, causes), and a change of what may change
// (replicas, template, minReadySeconds, updateStrategy,
// persistentVolumeClaimRetentionPolicy) is accepted by both and reads back
// the same spec.
func TestStatefulSetUpdatesAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)

	const sets = "/apis/apps/v1/namespaces/default/statefulsets"
	const web = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: nginx
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: "busybox:1"}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`
	both.must(t, http.StatusCreated, "POST", sets, web)
	for _, tc := range []struct{ name, patch string }{
		{"serviceName", `{"spec":{"serviceName":"other"}}`},
		{"podManagementPolicy", `{"spec":{"podManagementPolicy":"Parallel"}}`},
		{"selector", `{"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}}}}}`},
		{"selector narrowed", `{"spec":{"selector":{"matchLabels":{"tier":"a"}},"template":{"metadata":{"labels":{"tier":"a"}}}}}`},
		{"volumeClaimTemplates size", `{"spec":{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"2Gi"}}}}]}}`},
		{"volumeClaimTemplates dropped", `{"spec":{"volumeClaimTemplates":null}}`},
		{"volumeClaimTemplates added", `{"spec":{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}},
			{"metadata":{"name":"logs"},"spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"slow","resources":{"requests":{"storage":"100Mi"}}}}]}}`},
		{"several at once", `{"spec":{"serviceName":"other","podManagementPolicy":"Parallel","replicas":5}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			both.sameAnswer(t, http.StatusUnprocessableEntity, "PATCH", sets+"/web", tc.patch)
		})
	}

	t.Run("allowed", func(t *testing.T) {
		const patch = `{"spec":{"replicas":3,"minReadySeconds":5,"template":{"metadata":{"annotations":{"rev":"2"}},"spec":{"containers":[{"name":"c","image":"busybox:2"}]}},
			"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":1}},
			"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Retain"}}}`
		var specs []string
		for _, e := range both.each() {
			out := e.must(t, http.StatusOK, "PATCH", sets+"/web", patch)
			// kube-apiserver writes a container's empty resources as {},
			// minik8s leaves them out (every pod template and pod does so:
			// not a StatefulSet matter).
			spec := out["spec"].(map[string]any)
			for _, c := range spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
				if r, ok := c.(map[string]any)["resources"].(map[string]any); ok && len(r) == 0 {
					delete(c.(map[string]any), "resources")
				}
			}
			b, err := json.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			specs = append(specs, string(b))
		}
		if specs[0] != specs[1] {
			t.Errorf("spec after the update:\nkube-apiserver: %s\nminik8s:        %s", specs[0], specs[1])
		}
	})
}
