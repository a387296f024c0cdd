package realcomponents

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

// TestMirrorPodNodeRestrictionAsKube sends kube-apiserver v1.37 (Node,RBAC
// and NodeRestriction) and minik8s the mirror pods a kubelet
// (system:node:n1) may and may not create, and compares the answers: a
// mirror pod bound to n1 and owned by the Node n1 (its UID, controller) is
// created; a pod without the kubernetes.io/config.mirror annotation, one
// bound to another node, without or with another owner, a non-controller
// or blocking owner, and one that references API objects (service
// account, secret, configmap, projected token, claim volumes) are refused
// with the same words (the ServiceAccount admission's for secrets and
// tokens, which comes first).
func TestMirrorPodNodeRestrictionAsKube(t *testing.T) {
	k := startKubeAPIServer(t)
	// ServiceAccount admission on, as in kube-apiserver: it refuses the
	// mirror pods that name a secret or a token first.
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.DisableAdmissionPlugins = nil })
	both := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	const pods = "/api/v1/namespaces/default/pods"
	var nodeUIDs [2]string // kube-apiserver's, minik8s'
	for i, e := range both.each() {
		out := e.must(t, 201, "POST", "/api/v1/nodes", `{"metadata":{"name":"n1"}}`)
		nodeUIDs[i] = out["metadata"].(map[string]any)["uid"].(string)
		e.must(t, 201, "POST", "/api/v1/nodes", `{"metadata":{"name":"n2"}}`)
	}
	both.must(t, 201, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`)
	node := both.as(t, "system:node:n1", "system:nodes")

	// mirror is a mirror pod of n1 owned by the Node with uid; edit
	// rewrites its JSON (name, annotations, nodeName, owner, spec parts).
	mirror := func(name, uid string, edit func(string) string) string {
		body := fmt.Sprintf(`{"metadata":{"name":%q,"annotations":{"kubernetes.io/config.mirror":"h1","kubernetes.io/config.source":"file"},
			"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":%q,"controller":true}]},
			"spec":{"nodeName":"n1","containers":[{"name":"c","image":"busybox"}]VOLUMES}}`, name, uid)
		if edit != nil {
			body = edit(body)
		}
		return strings.Replace(body, "VOLUMES", "", 1)
	}
	// same sends each server its own body (its Node's UID) and compares
	// the answers.
	same := func(what string, wantCode int, edit func(string) string) {
		t.Helper()
		var codes [2]int
		var bodies [2]map[string]any
		for i, e := range node.each() {
			codes[i], bodies[i] = e.do(t, "POST", pods, mirror("static-"+strings.ReplaceAll(what, " ", "-"), nodeUIDs[i], edit))
		}
		if codes[0] != wantCode {
			t.Errorf("%s: kube-apiserver answered %d %v, the case expects %d", what, codes[0], bodies[0]["message"], wantCode)
		}
		// A UID in a message is each server's own.
		for i := range bodies {
			if m, ok := bodies[i]["message"].(string); ok {
				bodies[i]["message"] = strings.ReplaceAll(strings.ReplaceAll(m, nodeUIDs[i], "NODE-UID"), "0000"+nodeUIDs[i][4:], "STALE-UID")
			}
		}
		if codes[0] != codes[1] || (wantCode >= 400 && !reflect.DeepEqual(bodies[0], bodies[1])) {
			t.Errorf("%s:\nkube-apiserver %d %v\nminik8s        %d %v", what, codes[0], bodies[0], codes[1], bodies[1])
		}
		t.Logf("%s: %d %v", what, codes[0], bodies[0]["message"])
	}
	replace := func(old, new string) func(string) string {
		return func(s string) string { return strings.Replace(s, old, new, 1) }
	}
	volumes := func(v string) func(string) string { return replace("VOLUMES", `,"volumes":[`+v+`]`) }

	same("mirror", 201, nil)
	same("hostpath and emptydir", 201, volumes(`{"name":"h","hostPath":{"path":"/etc"}},{"name":"e","emptyDir":{}}`))
	same("not a mirror", 403, replace(`"kubernetes.io/config.mirror":"h1",`, ""))
	same("other node", 403, replace(`"nodeName":"n1"`, `"nodeName":"n2"`))
	same("no owner", 403, replace(`"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1",`, `"x":[{"apiVersion":"v1","kind":"Node","name":"n1",`))
	same("owner other node", 403, replace(`"name":"n1","uid"`, `"name":"n2","uid"`))
	same("owner not controller", 403, replace(`"controller":true`, `"controller":false`))
	same("owner blocks", 403, replace(`"controller":true`, `"controller":true,"blockOwnerDeletion":true`))
	same("owner stale uid", 403, func(s string) string {
		i := strings.Index(s, `"uid":"`) + len(`"uid":"`)
		return s[:i] + "0000" + s[i+4:]
	})
	same("secret volume", 403, volumes(`{"name":"s","secret":{"secretName":"db"}}`))
	same("configmap volume", 403, volumes(`{"name":"c","configMap":{"name":"cfg"}}`))
	same("configmap env", 403, replace(`"image":"busybox"`, `"image":"busybox","envFrom":[{"configMapRef":{"name":"cfg"}}]`))
	same("claim", 403, volumes(`{"name":"d","persistentVolumeClaim":{"claimName":"data"}}`))
	same("ephemeral", 403, volumes(`{"name":"x","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}}}`))
	same("projected token", 403, volumes(`{"name":"t","projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}}`))
	same("projected downward api", 201, volumes(`{"name":"d","projected":{"sources":[{"downwardAPI":{"items":[{"path":"n","fieldRef":{"fieldPath":"metadata.name"}}]}}]}}`))

	// The mirror annotation is immutable (ValidatePodSpecificAnnotationUpdates):
	// an administrator may not make a normal pod a mirror pod, nor change
	// or remove a mirror pod's annotation, through the pod or its status.
	both.must(t, 201, "POST", pods, `{"metadata":{"name":"plain"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"busybox"}]}}`)
	for _, sub := range []string{"", "/status"} {
		both.sameRefusal(t, "PATCH", pods+"/plain"+sub, `{"metadata":{"annotations":{"kubernetes.io/config.mirror":"h1"}}}`)
		both.sameRefusal(t, "PATCH", pods+"/static-mirror"+sub, `{"metadata":{"annotations":{"kubernetes.io/config.mirror":"h2"}}}`)
		both.sameRefusal(t, "PATCH", pods+"/static-mirror"+sub, `{"metadata":{"annotations":{"kubernetes.io/config.mirror":null}}}`)
	}
}
