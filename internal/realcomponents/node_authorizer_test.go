package realcomponents

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestNodeAuthorizerAsKube sends kube-apiserver v1.37 (Node,RBAC and
// NodeRestriction) and minik8s the same requests with a kubelet's
// credentials (system:node:n1 in system:nodes, a client certificate of
// each server's CA) and compares the answers (issue 26 items 9 and 12): a
// node reads only its own Node (a list must name it with
// metadata.name=n1), lists pods only with spec.nodeName=n1 and reads only
// the pods bound to it and the secrets they reference; writes to another
// node's objects are left to NodeRestriction, whose refusals match too;
// and it gets service account tokens only for the audiences its pod names
// (ServiceAccountNodeAudienceRestriction, on by default in v1.37).
func TestNodeAuthorizerAsKube(t *testing.T) {
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	both := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	const ns = "/api/v1/namespaces/default"
	for _, n := range []string{"n1", "n2"} {
		both.must(t, 201, "POST", "/api/v1/nodes", fmt.Sprintf(`{"metadata":{"name":%q}}`, n))
	}
	for _, name := range []string{"s-ref", "s-other"} {
		both.must(t, 201, "POST", ns+"/secrets", fmt.Sprintf(`{"metadata":{"name":%q},"stringData":{"k":"v"}}`, name))
	}
	both.must(t, 201, "POST", ns+"/serviceaccounts", `{"metadata":{"name":"web"}}`)
	// The same pod on both servers: kube-apiserver's ServiceAccount
	// admission (off in apiservertest) adds no token volume when
	// automounting is off, so both hold exactly these volumes.
	pod := func(name, node string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"nodeName":%q,"serviceAccountName":"web","automountServiceAccountToken":false,
			"containers":[{"name":"c","image":"busybox"}],
			"volumes":[{"name":"s","secret":{"secretName":"s-ref"}},
				{"name":"api","projected":{"sources":[{"serviceAccountToken":{"path":"token"}}]}},
				{"name":"vault","projected":{"sources":[{"serviceAccountToken":{"path":"token","audience":"vault"}}]}}]}}`, name, node)
	}
	var uids [2]string // kube-apiserver's, minik8s'
	for i, e := range both.each() {
		out := e.must(t, 201, "POST", ns+"/pods", pod("p1", "n1"))
		uids[i] = out["metadata"].(map[string]any)["uid"].(string)
	}
	both.must(t, 201, "POST", ns+"/pods", pod("p2", "n2"))

	node := both.as(t, "system:node:n1", "system:nodes")
	// The node graphs learn of the pods through watches.
	node.eventually(t, 200, "GET", ns+"/secrets/s-ref", "", "")

	// Nodes: only its own.
	node.must(t, 200, "GET", "/api/v1/nodes/n1", "")
	node.sameRefusal(t, "GET", "/api/v1/nodes/n2", "")
	node.sameRefusal(t, "GET", "/api/v1/nodes", "")
	node.sameRefusal(t, "GET", "/api/v1/nodes?watch=true", "")
	node.sameRefusal(t, "GET", "/api/v1/nodes?fieldSelector=metadata.name%3Dn2", "")
	node.must(t, 200, "GET", "/api/v1/nodes?fieldSelector=metadata.name%3Dn1", "")
	node.sameRefusal(t, "PATCH", "/api/v1/nodes/n2", `{"metadata":{"labels":{"a":"b"}}}`)
	node.sameRefusal(t, "PATCH", "/api/v1/nodes/n2/status", `{"status":{"phase":"Running"}}`)
	node.sameRefusal(t, "DELETE", "/api/v1/nodes/n1", "")

	// Pods: its own, by the spec.nodeName field selector.
	node.sameRefusal(t, "GET", "/api/v1/pods", "")
	node.sameRefusal(t, "GET", ns+"/pods", "")
	node.must(t, 200, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", "")
	node.must(t, 200, "GET", ns+"/pods?fieldSelector=spec.nodeName%3D%3Dn1,status.phase%21%3DFailed", "")
	node.sameRefusal(t, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn2", "")
	node.sameRefusal(t, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%21%3Dn1", "")
	node.sameRefusal(t, "GET", "/api/v1/pods?fieldSelector=spec.nodeName", "")
	node.must(t, 200, "GET", ns+"/pods/p1", "")
	node.must(t, 200, "GET", ns+"/pods?fieldSelector=metadata.name%3Dp1", "")
	node.sameRefusal(t, "GET", ns+"/pods/p2", "")
	node.sameRefusal(t, "GET", ns+"/pods?fieldSelector=metadata.name%3Dp2", "")
	node.sameRefusal(t, "PATCH", ns+"/pods/p2/status", `{"status":{"phase":"Running"}}`)

	// Secrets: only those its pods reference.
	node.sameRefusal(t, "GET", ns+"/secrets/s-other", "")
	node.sameRefusal(t, "GET", ns+"/secrets", "")
	node.must(t, 200, "GET", ns+"/secrets?fieldSelector=metadata.name%3Ds-ref", "")
	node.sameRefusal(t, "GET", ns+"/secrets?fieldSelector=metadata.name%3Ds-other", "")
	node.sameRefusal(t, "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n2", "")
	node.sameRefusal(t, "GET", ns+"/persistentvolumeclaims/nothing", "")

	// Objects naming nodes: reads need a relationship or the node's field
	// selector; creates for another node are NodeRestriction's to refuse.
	node.sameRefusal(t, "GET", "/apis/resource.k8s.io/v1/resourceslices", "")
	node.sameRefusal(t, "GET", "/apis/certificates.k8s.io/v1/podcertificaterequests", "")
	node.sameRefusal(t, "GET", "/apis/storage.k8s.io/v1/volumeattachments/va1", "")
	node.sameRefusal(t, "GET", "/apis/storage.k8s.io/v1/csinodes/n2", "")
	node.sameRefusal(t, "POST", "/apis/storage.k8s.io/v1/csinodes", `{"metadata":{"name":"n2"},"spec":{"drivers":[{"name":"d.example.com","nodeID":"n2"}]}}`)
	node.sameRefusal(t, "POST", "/apis/resource.k8s.io/v1/resourceslices",
		`{"metadata":{"name":"s2"},"spec":{"driver":"d.example.com","pool":{"name":"p","generation":1,"resourceSliceCount":1},"nodeName":"n2"}}`)
	node.sameRefusal(t, "PATCH", ns+"/persistentvolumeclaims/nothing/status", `{"status":{"phase":"Bound"}}`)

	// Tokens: the audiences p1's volumes name, no other (each server's
	// own pod UID in the binding).
	token := func(auds string) (code [2]int, body [2]map[string]any) {
		for i, e := range node.each() {
			req := fmt.Sprintf(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"audiences":%s,
				"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"p1","uid":%q}}}`, auds, uids[i])
			code[i], body[i] = e.do(t, "POST", ns+"/serviceaccounts/web/token", req)
		}
		return code, body
	}
	for _, tc := range []struct {
		auds string
		want int
	}{{`[]`, 201}, {`["vault"]`, 201}, {`["unnamed"]`, 403}, {`["https://kubernetes.default.svc.cluster.local"]`, 403}, {`["vault","unnamed"]`, 403}} {
		code, body := token(tc.auds)
		if code[0] != tc.want || code[1] != tc.want {
			t.Errorf("token for %s: kube-apiserver %d %v, minik8s %d %v; want %d", tc.auds, code[0], body[0], code[1], body[1], tc.want)
			continue
		}
		if tc.want != 201 && !reflect.DeepEqual(body[0], body[1]) {
			t.Errorf("token for %s:\nkube-apiserver %v\nminik8s        %v", tc.auds, body[0], body[1])
		}
		t.Logf("token for %s: %d %v", tc.auds, code[0], body[0]["message"])
	}

	// Last, as it would delete the pod if allowed.
	node.sameRefusal(t, "DELETE", ns+"/pods/p2", "")
}
