package realcomponents

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

// TestContainerV137FieldsAsKube: the container fields kube v1.37 added
// with in-place resize, container restart rules and recursive read-only
// mounts are refused as kube-apiserver refuses them (resizePolicy names
// and policies, only NotRequired when the pod never restarts; rules need a
// restartPolicy, a known action and operator, exitCodes; recursiveReadOnly
// needs readOnly and a known mode), and a valid pod keeps them as kube
// keeps them.
func TestContainerV137FieldsAsKube(t *testing.T) {
	t.Parallel()
	a := startBoth(t)
	const pods = "/api/v1/namespaces/default/pods"
	for _, e := range a.each() {
		if code, out := e.do(t, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: service account: %d %v", e.name, code, out)
		}
	}
	pod := func(name, restartPolicy, container, volumes string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":{"automountServiceAccountToken":false,"restartPolicy":"` + restartPolicy + `",` + volumes +
			`"containers":[{"name":"c","image":"busybox",` + container + `}]}}`
	}
	a.sameRefusal(t, "POST", pods, pod("resize", "Never",
		`"resizePolicy":[{"resourceName":"cpu","restartPolicy":"RestartContainer"},{"resourceName":"cpu","restartPolicy":"NotRequired"},{"resourceName":"gpu","restartPolicy":"Sometimes"}]`, ""))
	a.sameRefusal(t, "POST", pods, pod("rules", "Always",
		`"restartPolicyRules":[{"action":"Kill","exitCodes":{"operator":"Is","values":[1]}},{"action":"Restart"}]`, ""))
	a.sameRefusal(t, "POST", pods, pod("policy", "Always", `"restartPolicy":"Sometimes"`, ""))
	a.sameRefusal(t, "POST", pods, pod("rro", "Always",
		`"volumeMounts":[{"name":"v","mountPath":"/v","recursiveReadOnly":"Enabled"}]`, `"volumes":[{"name":"v","emptyDir":{}}],`))
	a.sameRefusal(t, "POST", pods, pod("rro-mode", "Always",
		`"volumeMounts":[{"name":"v","mountPath":"/v","readOnly":true,"recursiveReadOnly":"Sometimes"}]`, `"volumes":[{"name":"v","emptyDir":{}}],`))
	a.sameRefusal(t, "POST", pods, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"init"},"spec":{"initContainers":[{"name":"i","image":"busybox",`+
		`"resizePolicy":[{"resourceName":"memory","restartPolicy":"RestartContainer"}]}],"containers":[{"name":"c","image":"busybox"}]}}`)

	// Valid: every field kept as written.
	valid := pod("valid", "Never", `"restartPolicy":"OnFailure","restartPolicyRules":[{"action":"Restart","exitCodes":{"operator":"In","values":[42]}}],`+
		`"resizePolicy":[{"resourceName":"cpu","restartPolicy":"NotRequired"}],`+
		`"volumeMounts":[{"name":"v","mountPath":"/v","readOnly":true,"recursiveReadOnly":"IfPossible"}]`, `"volumes":[{"name":"v","emptyDir":{}}],`)
	var got [2]any
	for i, e := range a.each() {
		e.must(t, http.StatusCreated, "POST", pods, valid)
		c := e.must(t, http.StatusOK, "GET", pods+"/valid", "")["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		got[i] = []any{c["restartPolicy"], c["restartPolicyRules"], c["resizePolicy"], c["volumeMounts"]}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		k, _ := json.Marshal(got[0])
		o, _ := json.Marshal(got[1])
		t.Errorf("stored container fields differ:\nkube-apiserver: %s\nminik8s:        %s", k, o)
	}

	// Fields of features kube v1.37 has off by default are accepted and not
	// stored, an invalid stop signal included (it is dropped before
	// validation); those of features on (fileKeyRef, resources.claims,
	// hostnameOverride) are kept.
	gated := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"gated"},"spec":{"automountServiceAccountToken":false,"hostnameOverride":"h",` +
		`"schedulingGroup":{"podGroupName":"g"},"evictionResponders":[{"name":"example.com/r","priority":10000}],` +
		`"volumes":[{"name":"e","emptyDir":{"mode":493}},{"name":"cm","configMap":{"name":"c","defaultUser":1000,"items":[{"key":"k","path":"p","user":1}]}}],` +
		`"containers":[{"name":"c","image":"busybox","lifecycle":{"stopSignal":"SIGFOO"},` +
		`"env":[{"name":"F","valueFrom":{"fileKeyRef":{"volumeName":"e","path":"env","key":"K"}}}],` +
		`"livenessProbe":{"httpGet":{"port":80,"protocol":"HTTP2"}},"readinessProbe":{"grpc":{"port":9000,"mode":"TLS"}},` +
		`"volumeMounts":[{"name":"e","mountPath":"/e","bindMountOptions":["noexec"]}]}]}}`
	for i, e := range a.each() {
		e.must(t, http.StatusCreated, "POST", pods, gated)
		spec := e.must(t, http.StatusOK, "GET", pods+"/gated", "")["spec"].(map[string]any)
		c := spec["containers"].([]any)[0].(map[string]any)
		got[i] = []any{spec["hostnameOverride"], spec["schedulingGroup"], spec["evictionResponders"], spec["volumes"],
			c["lifecycle"], c["env"], c["livenessProbe"], c["readinessProbe"], c["volumeMounts"]}
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		k, _ := json.Marshal(got[0])
		o, _ := json.Marshal(got[1])
		t.Errorf("stored gated fields differ:\nkube-apiserver: %s\nminik8s:        %s", k, o)
	}
}
