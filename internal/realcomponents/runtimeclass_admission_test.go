package realcomponents

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestRuntimeClassAdmissionAsKube sends kube-apiserver v1.37 and minik8s
// the pods of the RuntimeClass conformance specs and compares the
// RuntimeClass admission plugin's answers: a pod naming a class that does
// not exist (or no longer does) is refused, dry run or not; the class's
// overhead, node selector and tolerations are set on a pod created with
// it; an overhead of the pod's own that differs from its class's, or that
// no class defines, and a node selector at odds with the class's are
// refused.
func TestRuntimeClassAdmissionAsKube(t *testing.T) {
	both := startBoth(t)
	const (
		pods    = "/api/v1/namespaces/default/pods"
		classes = "/apis/node.k8s.io/v1/runtimeclasses"
	)
	for _, e := range both.each() {
		if code, out := e.do(t, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: service account: %d %v", e.name, code, out)
		}
	}
	pod := func(name, extra string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{` + extra + `"automountServiceAccountToken":false,"containers":[{"name":"c","image":"busybox"}]}}`
	}
	both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"sandboxed"},"handler":"runc",
		"overhead":{"podFixed":{"cpu":"250m","memory":"120Mi"}},
		"scheduling":{"nodeSelector":{"sandbox":"yes"},"tolerations":[{"key":"sandbox","operator":"Exists","effect":"NoSchedule"}]}}`)
	both.must(t, http.StatusCreated, "POST", classes, `{"metadata":{"name":"delete-me"},"handler":"runc"}`)

	// Classes that are not there: refused (the specs create with dryRun).
	both.sameRefusal(t, "POST", pods+"?dryRun=All", pod("nonexistent", `"runtimeClassName":"nonesuch",`))
	both.sameRefusal(t, "POST", pods, pod("nonexistent", `"runtimeClassName":"nonesuch",`))
	both.must(t, http.StatusOK, "DELETE", classes+"/delete-me", "")
	// kube-apiserver's RuntimeClass informer sees the deletion a moment
	// later: wait for it before comparing.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := both.kube.do(t, "POST", pods+"?dryRun=All", pod("deleted", `"runtimeClassName":"delete-me",`)); code == http.StatusForbidden {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver still admits a pod of the deleted RuntimeClass: %d", code)
		}
	}
	both.sameRefusal(t, "POST", pods+"?dryRun=All", pod("deleted", `"runtimeClassName":"delete-me",`))

	// Overheads and node selectors at odds with the class.
	both.sameRefusal(t, "POST", pods, pod("own-overhead", `"overhead":{"cpu":"1"},`))
	both.sameRefusal(t, "POST", pods, pod("other-overhead", `"runtimeClassName":"sandboxed","overhead":{"cpu":"1"},`))
	both.sameRefusal(t, "POST", pods, pod("conflict", `"runtimeClassName":"sandboxed","nodeSelector":{"sandbox":"no"},`))

	// The class's overhead, node selector and tolerations, merged with the
	// pod's (a toleration the class's covers is dropped).
	var got [2]string
	for i, e := range both.each() {
		out := e.must(t, http.StatusCreated, "POST", pods, pod("sandboxed", `"runtimeClassName":"sandboxed","overhead":{"memory":"120Mi","cpu":"250m"},
			"nodeSelector":{"disk":"ssd"},"tolerations":[{"key":"sandbox","operator":"Equal","value":"x","effect":"NoSchedule"},{"key":"gpu","operator":"Exists"}],`))
		spec := out["spec"].(map[string]any)
		b, _ := json.Marshal(map[string]any{"overhead": spec["overhead"], "nodeSelector": spec["nodeSelector"], "tolerations": spec["tolerations"]})
		got[i] = string(b)
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("the pod created with a RuntimeClass:\nkube-apiserver: %s\nminik8s:        %s", got[0], got[1])
	}
	t.Logf("kube-apiserver: %s", got[0])
}
