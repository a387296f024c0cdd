package realcomponents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestPodResizeAsKube sends kube-apiserver v1.37 and minik8s the same
// requests to pods/NAME/resize (in-place pod resize) and compares the
// answers: the Pod it reads, a resize that changes, adds and keeps
// resources (a new generation, the rest of the spec and the metadata as
// stored), a PUT of the whole pod, and the refusals of kube's
// ValidatePodResize (requests or limits removed, the QoS class changed,
// other resources than cpu and memory, containers added, renamed or
// reordered, a resizePolicy changed, requests above limits, a node that
// reports no resources of a running container), a stale resourceVersion,
// a plain update of the resources, and a user allowed to patch pods but
// not pods/resize.
func TestPodResizeAsKube(t *testing.T) {
	t.Parallel()
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	users := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	both := users.apiservers
	const pods = "/api/v1/namespaces/default/pods"
	for _, e := range both.each() {
		if code, out := e.do(t, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: service account: %d %v", e.name, code, out)
		}
	}
	pod := func(name, containers string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"app":"resize"}},"spec":{"automountServiceAccountToken":false,"serviceAccountName":"default","restartPolicy":"OnFailure","containers":%s}}`, name, containers)
	}
	both.sameAcceptance(t, http.StatusCreated, "POST", pods, pod("burst", `[
		{"name":"c1","image":"busybox","resources":{"requests":{"cpu":"20m"}}},
		{"name":"c2","image":"busybox","resources":{"requests":{"memory":"35Mi"},"limits":{"memory":"45Mi"}},
		 "resizePolicy":[{"resourceName":"memory","restartPolicy":"RestartContainer"}]}]`))
	both.must(t, http.StatusCreated, "POST", pods, pod("requests", `[
		{"name":"c1","image":"busybox","resources":{"requests":{"cpu":"20m"}}},
		{"name":"c2","image":"busybox","resources":{"requests":{"memory":"35Mi"}}}]`))
	both.must(t, http.StatusCreated, "POST", pods, pod("besteffort", `[{"name":"c1","image":"busybox"}]`))
	both.must(t, http.StatusCreated, "POST", pods, pod("guaranteed", `[{"name":"c1","image":"busybox","resources":{"limits":{"cpu":"20m","memory":"35Mi"}}}]`))

	// The subresource reads the Pod.
	both.sameAcceptance(t, http.StatusOK, "GET", pods+"/burst/resize", "", pods+"/burst")

	// A resize: c1 gets more cpu and a limit; generation 2.
	both.sameAcceptance(t, http.StatusOK, "PATCH", pods+"/burst/resize",
		`[{"op":"replace","path":"/spec/containers/0/resources","value":{"requests":{"cpu":"25m"},"limits":{"cpu":"35m"}}}]`, pods+"/burst")
	// What is not resources or resizePolicy is dropped, not refused: the
	// image and the labels stay, nothing changes. (A JSON patch may
	// replace a member the pod does not have: kube's json-patch adds it.)
	both.sameAcceptance(t, http.StatusOK, "PATCH", pods+"/burst/resize",
		`[{"op":"replace","path":"/spec/containers/0/image","value":"busybox:2"},{"op":"replace","path":"/metadata/labels","value":{"app":"other"}},{"op":"replace","path":"/spec/activeDeadlineSeconds","value":30}]`, pods+"/burst")
	// A limit added to c2's memory request only: limits default requests.
	both.sameAcceptance(t, http.StatusOK, "PATCH", pods+"/burst/resize",
		`[{"op":"replace","path":"/spec/containers/1/resources","value":{"limits":{"memory":"50Mi"}}}]`, pods+"/burst")

	for _, c := range []struct{ what, path, patch string }{
		{"requests removed", "requests", `[{"op":"remove","path":"/spec/containers/0/resources/requests"}]`},
		{"one request removed", "requests", `[{"op":"replace","path":"/spec/containers/1/resources/requests","value":{"cpu":"10m"}}]`},
		{"limits removed", "burst", `[{"op":"remove","path":"/spec/containers/1/resources/limits"}]`},
		{"best-effort pod gets a request", "besteffort", `[{"op":"add","path":"/spec/containers/0/resources/requests","value":{"memory":"35Mi"}}]`},
		{"guaranteed pod gets a higher limit", "guaranteed", `[{"op":"replace","path":"/spec/containers/0/resources/limits/cpu","value":"30m"}]`},
		{"ephemeral-storage", "burst", `[{"op":"add","path":"/spec/containers/0/resources/requests/ephemeral-storage","value":"1Gi"}]`},
		{"containers reordered", "burst", `[{"op":"move","from":"/spec/containers/1","path":"/spec/containers/0"}]`},
		{"container renamed", "burst", `[{"op":"replace","path":"/spec/containers/0/name","value":"c9"}]`},
		{"container added", "burst", `[{"op":"add","path":"/spec/containers/-","value":{"name":"c3","image":"busybox","resources":{"requests":{"cpu":"1m"}}}}]`},
		{"resizePolicy changed", "burst", `[{"op":"add","path":"/spec/containers/0/resizePolicy","value":[{"resourceName":"cpu","restartPolicy":"RestartContainer"}]}]`},
		{"request above limit", "burst", `[{"op":"replace","path":"/spec/containers/1/resources/requests/memory","value":"60Mi"}]`},
	} {
		t.Run(c.what, func(t *testing.T) {
			both.sameRefusal(t, "PATCH", pods+"/"+c.path+"/resize", c.patch)
		})
	}
	// PUT: a stale resourceVersion, another name, then the whole pod.
	both.sameRefusal(t, "PUT", pods+"/burst/resize", `{"metadata":{"name":"burst","resourceVersion":"1"},"spec":{"containers":[{"name":"c1","image":"busybox"}]}}`)
	both.sameRefusal(t, "PUT", pods+"/burst/resize", `{"metadata":{"name":"other"},"spec":{"containers":[{"name":"c1","image":"busybox"}]}}`)
	var put [2]map[string]any
	for i, e := range both.each() {
		cur := e.must(t, http.StatusOK, "GET", pods+"/burst", "")
		c0 := cur["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c0["resources"] = map[string]any{"requests": map[string]any{"cpu": "30m"}, "limits": map[string]any{"cpu": "40m"}}
		put[i] = withoutServerMeta(e.must(t, http.StatusOK, "PUT", pods+"/burst/resize", mustJSON(t, cur)))
	}
	if a, b := mustJSON(t, put[0]), mustJSON(t, put[1]); a != b {
		t.Errorf("PUT pods/burst/resize:\nkube-apiserver: %s\nminik8s:        %s", a, b)
	}
	// The pod's own endpoint still may not change resources. (The diff
	// kube-apiserver appends to its message is its own: unified, of its
	// internal types' JSON; only the message's head is compared.)
	for _, e := range both.each() {
		out := e.must(t, http.StatusUnprocessableEntity, "PATCH", pods+"/burst", `[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"31m"}]`)
		const head = "Pod \"burst\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
		if msg, _ := out["message"].(string); !strings.HasPrefix(msg, head) {
			t.Errorf("%s: plain update of resources: %q", e.name, msg)
		}
	}

	// A node whose kubelet reports no resources of a running container
	// cannot resize it.
	both.must(t, http.StatusOK, "PATCH", pods+"/besteffort/status",
		`{"status":{"containerStatuses":[{"name":"c1","image":"busybox","imageID":"","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]}}`)
	both.sameRefusal(t, "PATCH", pods+"/besteffort/resize", `[{"op":"add","path":"/spec/containers/0/resources/requests","value":{"memory":"35Mi"}}]`)

	// Authorization sees the subresource: patching pods is not resizing them.
	const rbac = "/apis/rbac.authorization.k8s.io/v1"
	both.must(t, http.StatusCreated, "POST", rbac+"/namespaces/default/roles", `{"metadata":{"name":"pod-patcher"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","patch","update"]}]}`)
	both.must(t, http.StatusCreated, "POST", rbac+"/namespaces/default/rolebindings",
		`{"metadata":{"name":"pod-patcher"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pod-patcher"}}`)
	alice := users.as(t, "alice")
	alice.eventually(t, http.StatusOK, "GET", pods+"/burst", "", "")
	alice.sameRefusal(t, "PATCH", pods+"/burst/resize", `[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"32m"}]`)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
