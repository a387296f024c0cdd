package realcomponents

import (
	"net/http"
	"testing"
)

// TestEphemeralVolumeValidationAsKube: pods whose generic ephemeral
// volumes are malformed (no volumeClaimTemplate, template metadata beyond
// labels and annotations, bad labels, a claim spec without access modes
// or storage request, an unknown access mode, a bad class or volume mode)
// get kube-apiserver's 422 and causes from ours; a valid one is accepted
// alike.
func TestEphemeralVolumeValidationAsKube(t *testing.T) {
	both := startBoth(t)
	for _, e := range both.each() {
		if code, out := e.do(t, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: service account: %d %v", e.name, code, out)
		}
	}
	pod := func(name, ephemeral string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"automountServiceAccountToken":false,"serviceAccountName":"default",` +
			`"containers":[{"name":"c","image":"busybox","volumeMounts":[{"name":"scratch","mountPath":"/scratch"}]}],` +
			`"volumes":[{"name":"scratch","ephemeral":` + ephemeral + `}]}}`
	}
	const spec = `"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}`
	for _, c := range []struct{ name, ephemeral string }{
		{"no-template", `{}`},
		{"null-template", `{"volumeClaimTemplate":null}`},
		{"meta-name", `{"volumeClaimTemplate":{"metadata":{"name":"x","namespace":"y","finalizers":["a/b"]},` + spec + `}}`},
		{"meta-labels", `{"volumeClaimTemplate":{"metadata":{"labels":{"bad key!":"v"},"annotations":{"-x":"y"}},` + spec + `}}`},
		{"empty-spec", `{"volumeClaimTemplate":{"spec":{}}}`},
		{"bad-mode", `{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteSometimes"],"volumeMode":"Tape","storageClassName":"Bad_Class","resources":{"requests":{"storage":"1Gi"}}}}}`},
		{"zero-size", `{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"0"}}}}}`},
		{"rwop-mixed", `{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOncePod","ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			both.sameRefusal(t, "POST", "/api/v1/namespaces/default/pods", pod(c.name, c.ephemeral))
		})
	}
	// No volumeMode: both default it to Filesystem inside the template.
	both.sameAcceptance(t, http.StatusCreated, "POST", "/api/v1/namespaces/default/pods",
		pod("valid", `{"volumeClaimTemplate":{"metadata":{"labels":{"app":"db"}},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}`),
		"/api/v1/namespaces/default/pods/valid")
}
