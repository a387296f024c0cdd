package realcomponents

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestCSIInlineVolumePatchAsKube: a pod with inline CSI volumes (kept as
// written by minik8s) takes a metadata patch as on kube-apiserver, 200
// with its generation unchanged; the conformance spec "CSIInlineVolumes
// should support CSIVolumeSource in Pod API" got 422 "pod updates may not
// change fields" when the patch re-encoded the source with sorted keys.
func TestCSIInlineVolumePatchAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const pods = "/api/v1/namespaces/default/pods"
	for _, e := range both.each() {
		if code, out := e.do(t, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: service account: %d %v", e.name, code, out)
		}
	}
	const pod = `{"metadata":{"name":"csi"},"spec":{"automountServiceAccountToken":false,
		"volumes":[{"name":"v1","csi":{"driver":"e2e.example.com"}},{"name":"v2","csi":{"driver":"e2e.example.com","readOnly":true,"fsType":"ext4","volumeAttributes":{"z":"1","a":"2"}}}],
		"containers":[{"name":"c","image":"busybox","volumeMounts":[{"name":"v1","mountPath":"/mnt/vol1"},{"name":"v2","mountPath":"/mnt/vol2"}]}]}}`
	var volumes [2]string
	for i, e := range both.each() {
		out := e.must(t, http.StatusCreated, "POST", pods, pod)
		v, _ := json.Marshal(out["spec"].(map[string]any)["volumes"])
		volumes[i] = string(v)
	}
	if volumes[0] != volumes[1] {
		t.Errorf("stored volumes:\nkube-apiserver: %s\nminik8s:        %s", volumes[0], volumes[1])
	}
	for _, e := range both.each() {
		e.must(t, http.StatusOK, "PATCH", pods+"/csi", `{"metadata":{"annotations":{"patched":"true"}}}`)
		p := e.must(t, http.StatusOK, "GET", pods+"/csi", "")
		if g := p["metadata"].(map[string]any)["generation"]; g != float64(1) {
			t.Errorf("%s: generation %v after a metadata patch, want 1", e.name, g)
		}
	}
}
