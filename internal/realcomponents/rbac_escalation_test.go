package realcomponents

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/pki"
)

// rbacUsers are the two apiservers of startBoth, each also spoken to as
// any user with a client certificate of its CA.
type rbacUsers struct {
	apiservers
	kubeCA, oursCA *pki.CA
	oursBase       string
}

// as returns both apiservers as user in groups.
func (r rbacUsers) as(t *testing.T, user string, groups ...string) apiservers {
	t.Helper()
	ep := func(name, base string, ca *pki.CA) *endpoint {
		certPEM, keyPEM, err := ca.IssueClient(user, groups, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca.CertPEM())
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}
		return &endpoint{name: name + " as " + user, base: base, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	}
	return apiservers{kube: ep("kube-apiserver", r.kube.base, r.kubeCA), ours: ep("minik8s", r.oursBase, r.oursCA)}
}

// eventually sends the request to each apiserver until it answers code
// with a message containing contains: the RBAC objects just written reach
// both authorizers through caches.
func (a apiservers) eventually(t *testing.T, code int, method, path, body, contains string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, e := range a.each() {
		waitFor(ctx, t, fmt.Sprintf("%s: %s %s to answer %d", e.name, method, path, code), func() (bool, string) {
			got, out := e.do(t, method, path, body)
			msg, _ := out["message"].(string)
			return got == code && strings.Contains(msg, contains), fmt.Sprintf("%d %v", got, out)
		})
	}
}

// TestRBACEscalationAsKube sends kube-apiserver v1.37 and minik8s the
// writes of issue 26's escalation check, as users holding some RBAC
// rights, and compares the refusals word for word: a binding of
// cluster-admin by a user who may only create RoleBindings, a role wider
// than its author's rights (create, update, patch), a ClusterRoleBinding,
// a missing role, an aggregationRule; and the exceptions (bind, escalate,
// system:masters, an update of finalizers only).
func TestRBACEscalationAsKube(t *testing.T) {
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	both := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	const (
		rbac = "/apis/rbac.authorization.k8s.io/v1"
		held = "is attempting to grant RBAC permissions not currently held"
	)
	binding := func(name, user, kind, role string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":%q}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":%q,"name":%q}}`, name, user, kind, role)
	}
	grant := func(user, role, rules string) {
		both.must(t, 201, "POST", rbac+"/namespaces/team/roles", fmt.Sprintf(`{"metadata":{"name":%q},"rules":%s}`, role, rules))
		both.must(t, 201, "POST", rbac+"/namespaces/team/rolebindings", binding(role+"-"+user, user, "Role", role))
	}
	both.must(t, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)

	// alice may only create RoleBindings.
	grant("alice", "rb-creator", `[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["rolebindings"],"verbs":["create"]}]`)
	alice := both.as(t, "alice", "dev")
	adminBinding := binding("alice-admin", "alice", "ClusterRole", "cluster-admin")
	alice.eventually(t, 403, "POST", rbac+"/namespaces/team/rolebindings", adminBinding, held)
	alice.sameRefusal(t, "POST", rbac+"/namespaces/team/rolebindings", adminBinding)
	alice.sameRefusal(t, "GET", "/api/v1/namespaces/team/secrets", "")
	alice.sameRefusal(t, "POST", rbac+"/namespaces/team/rolebindings", binding("alice-none", "alice", "ClusterRole", "nothing"))
	alice.sameRefusal(t, "POST", rbac+"/namespaces/team/rolebindings", binding("alice-none", "alice", "Role", "nothing"))
	alice.must(t, 201, "POST", rbac+"/namespaces/team/rolebindings", binding("alice-self", "alice", "Role", "rb-creator"))
	// With bind on cluster-admin she may.
	both.must(t, 201, "POST", rbac+"/clusterroles", `{"metadata":{"name":"bind-admin"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles"],"verbs":["bind"],"resourceNames":["cluster-admin"]}]}`)
	both.must(t, 201, "POST", rbac+"/namespaces/team/rolebindings", binding("bind-admin-alice", "alice", "ClusterRole", "bind-admin"))
	alice.eventually(t, 201, "POST", rbac+"/namespaces/team/rolebindings", adminBinding, "")

	// bob writes roles with rules he holds, not beyond them.
	grant("bob", "role-writer", `[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles","clusterroles"],"verbs":["create","update","patch","get"]},{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]`)
	bob := both.as(t, "bob")
	bob.eventually(t, 201, "POST", rbac+"/namespaces/team/roles", `{"metadata":{"name":"pod-reader"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`, "")
	bob.sameRefusal(t, "POST", rbac+"/namespaces/team/roles", `{"metadata":{"name":"secret-reader"},"rules":[{"apiGroups":[""],"resources":["secrets","configmaps"],"verbs":["get","list"]},{"apiGroups":[""],"resources":["pods"],"verbs":["list","delete"]},{"nonResourceURLs":["/metrics"],"verbs":["get"]}]}`)
	bob.sameRefusal(t, "POST", rbac+"/namespaces/team/roles", `{"metadata":{"name":"named"},"rules":[{"apiGroups":["apps"],"resources":["deployments/scale"],"resourceNames":["a","b"],"verbs":["update"]}]}`)
	bob.sameRefusal(t, "PATCH", rbac+"/namespaces/team/roles/pod-reader", `{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["*"]}]}`)
	bob.sameRefusal(t, "PUT", rbac+"/namespaces/team/roles/pod-reader", `{"metadata":{"name":"pod-reader"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","delete"]}]}`)
	bob.must(t, 200, "PATCH", rbac+"/namespaces/team/roles/pod-reader", `{"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]}`)
	// A cluster role's rules are checked against his cluster-wide rights
	// only; an aggregationRule takes cluster-admin's.
	both.must(t, 201, "POST", rbac+"/clusterroles", `{"metadata":{"name":"cr-writer"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles"],"verbs":["create"]}]}`)
	both.must(t, 201, "POST", rbac+"/clusterrolebindings", binding("cr-writer-bob", "bob", "ClusterRole", "cr-writer"))
	bob.eventually(t, 201, "POST", rbac+"/clusterroles", `{"metadata":{"name":"bob-empty"},"rules":[]}`, "")
	bob.sameRefusal(t, "POST", rbac+"/clusterroles", `{"metadata":{"name":"bob-pods"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`)
	bob.sameRefusal(t, "POST", rbac+"/clusterroles", `{"metadata":{"name":"bob-agg"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"a":"b"}}]},"rules":[]}`)
	// Finalizers only: no escalation, whatever the role grants.
	both.must(t, 201, "POST", rbac+"/namespaces/team/roles", `{"metadata":{"name":"wide"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["*"]}]}`)
	bob.eventually(t, 200, "PATCH", rbac+"/namespaces/team/roles/wide", `{"metadata":{"finalizers":["example.com/keep"]}}`, "")
	bob.sameRefusal(t, "PATCH", rbac+"/namespaces/team/roles/wide", `{"metadata":{"labels":{"a":"b"}}}`)
	// An unconditional update (no resourceVersion) is not "only the GC
	// fields": the whole role is checked.
	bob.sameRefusal(t, "PUT", rbac+"/namespaces/team/roles/wide", `{"metadata":{"name":"wide","namespace":"team","finalizers":["example.com/other"]},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["*"]}]}`)

	// carol may escalate roles.
	grant("carol", "escalator", `[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"],"verbs":["create","escalate"]}]`)
	both.as(t, "carol").eventually(t, 201, "POST", rbac+"/namespaces/team/roles", `{"metadata":{"name":"carol-secrets"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["*"]}]}`, "")

	// dave creates ClusterRoleBindings.
	both.must(t, 201, "POST", rbac+"/clusterroles", `{"metadata":{"name":"crb-creator"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterrolebindings"],"verbs":["create"]}]}`)
	both.must(t, 201, "POST", rbac+"/clusterrolebindings", binding("crb-creator-dave", "dave", "ClusterRole", "crb-creator"))
	dave := both.as(t, "dave", "g1", "g2")
	dave.eventually(t, 201, "POST", rbac+"/clusterrolebindings", binding("dave-self", "dave", "ClusterRole", "crb-creator"), "")
	dave.sameRefusal(t, "POST", rbac+"/clusterrolebindings", binding("dave-admin", "dave", "ClusterRole", "cluster-admin"))
	dave.sameRefusal(t, "POST", rbac+"/clusterrolebindings", binding("dave-none", "dave", "ClusterRole", "nothing"))
	// Every authenticated user holds system:basic-user's rules (through
	// its binding to the group system:authenticated).
	dave.must(t, 201, "POST", rbac+"/clusterrolebindings", binding("dave-basic", "dave", "ClusterRole", "system:basic-user"))

	// system:masters is never refused.
	root := both.as(t, "root", "system:masters")
	root.must(t, 201, "POST", rbac+"/clusterrolebindings", binding("root-admin", "someone", "ClusterRole", "cluster-admin"))
	root.must(t, 201, "POST", rbac+"/clusterroles", `{"metadata":{"name":"agg"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"a":"b"}}]},"rules":[]}`)
}
