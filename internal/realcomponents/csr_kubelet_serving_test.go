package realcomponents

import (
	"net/http"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestKubeletServingCSRAsKube sends kube-apiserver v1.37 and minik8s the
// kubelet-serving requests a node may and may not file, as that node
// (system:node:n1), and compares the answers word for word: for its own
// name it is created; for another node's name (either node signer) it is
// refused by NodeRestriction ("can only create a node CSR with
// CN=system:node:n1"); another signer's request is not NodeRestriction's
// business.
func TestKubeletServingCSRAsKube(t *testing.T) {
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	both := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	const csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	node := both.as(t, "system:node:n1", "system:nodes")
	serving := []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth}
	client := []api.KeyUsage{api.UsageDigitalSignature, api.UsageClientAuth}

	node.must(t, 201, "POST", csrs, csrBody(t, "own", api.KubeletServingSignerName,
		requestPEM(t, "system:node:n1", []string{"system:nodes"}, []string{"n1"}), nil, serving...))
	node.sameRefusal(t, "POST", csrs, csrBody(t, "other-serving", api.KubeletServingSignerName,
		requestPEM(t, "system:node:n2", []string{"system:nodes"}, []string{"n2"}), nil, serving...))
	node.sameRefusal(t, "POST", csrs, csrBody(t, "other-client", api.KubeAPIServerClientKubeletSignerName,
		requestPEM(t, "system:node:n2", []string{"system:nodes"}, nil), nil, client...))
	node.must(t, 201, "POST", csrs, csrBody(t, "elsewhere", "example.com/signer",
		requestPEM(t, "system:node:n2", []string{"system:nodes"}, nil), nil, client...))
}
