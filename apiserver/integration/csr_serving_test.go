package integration

import (
	"crypto/x509"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/pki"
)

var servingUsages = []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth}

// servingNode registers Node name with the addresses its kubelet reports
// and returns a client speaking as that kubelet.
func servingNode(t *testing.T, s *apiservertest.Server, admin *tclient, name string, addrs ...api.NodeAddress) *tclient {
	t.Helper()
	n := api.Node{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: api.ObjectMeta{Name: name}}
	created := admin.must(201, "POST", "/api/v1/nodes", n)
	n.ResourceVersion = rv(created)
	n.Status.Addresses = addrs
	admin.must(200, "PUT", "/api/v1/nodes/"+name+"/status", n)
	return &tclient{t: t, base: s.SecureURL(), hc: userClient(t, s, pki.NodeUser(name), pki.NodesGroup)}
}

// TestCSRKubeletServingApproval: with --approve-kubelet-serving-
// certificates a kubelet-serving request a node files for its own name
// and addresses is approved and signed (a server certificate for exactly
// those names); a node's request naming an address it does not have,
// another node, or a client usage is Denied with the reason; the same
// request filed by someone else (an administrator) is left pending, and
// signed once approved by hand.
func TestCSRKubeletServingApproval(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.ApproveKubeletServingCertificates = true })
	admin := newClient(t, s)
	read, settled, approve := csrHelpers(t, admin)
	node := servingNode(t, s, admin, "n1", api.NodeAddress{Type: api.NodeInternalIP, Address: "10.0.0.1"},
		api.NodeAddress{Type: api.NodeHostName, Address: "n1"}, api.NodeAddress{Type: api.NodeExternalDNS, Address: "n1.example.com"})
	denied := func(name string) api.CertificateSigningRequest {
		t.Helper()
		var csr api.CertificateSigningRequest
		waitForState(t, 10*time.Second, func() bool { csr = read(name); return len(csr.Status.Conditions) > 0 },
			func() string { return spew(csr) })
		if len(csr.Status.Certificate) != 0 || len(csr.Status.Conditions) != 1 || !hasCondition(csr, api.CertificateDenied) ||
			csr.Status.Conditions[0].Reason != "KubeletServingCertificateNotAllowed" {
			t.Errorf("%s: want Denied (KubeletServingCertificateNotAllowed), got %s", name, spew(csr))
		}
		return csr
	}
	own := func(dns []string, ips ...net.IP) []byte {
		return requestPEM(t, "system:node:n1", []string{"system:nodes"}, dns, ips...)
	}

	// Filed by an administrator for n1's names: left alone (the controller
	// handles requests in order, so once the node's own is signed, this
	// one has been seen).
	admin.must(201, "POST", csrPath, newCSR("by-admin", api.KubeletServingSignerName, own([]string{"n1"}, net.ParseIP("10.0.0.1")), servingUsages...))
	node.must(201, "POST", csrPath, newCSR("own", api.KubeletServingSignerName,
		own([]string{"n1", "n1.example.com"}, net.ParseIP("10.0.0.1")), servingUsages...))
	got := settled("own")
	if !hasConditionMessage(got, api.CertificateApproved, "AutoApproved",
		`Auto approving kubelet serving certificate: every subject alternative name is an address of node "n1".`) {
		t.Errorf("a node's own serving request: %s", spew(got))
	}
	cert, err := pki.ParseCertPEM(got.Status.Certificate)
	if err != nil {
		t.Fatalf("issued certificate: %v", err)
	}
	if cert.Subject.CommonName != "system:node:n1" || !slices.Equal(cert.DNSNames, []string{"n1", "n1.example.com"}) ||
		len(cert.IPAddresses) != 1 || !cert.IPAddresses[0].Equal(net.ParseIP("10.0.0.1")) ||
		!slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("issued certificate: CN %s DNS %v IP %v EKU %v", cert.Subject.CommonName, cert.DNSNames, cert.IPAddresses, cert.ExtKeyUsage)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: s.PKI().CA.Pool(), DNSName: "10.0.0.1"}); err != nil {
		t.Errorf("the issued certificate does not verify for 10.0.0.1 against the cluster CA: %v", err)
	}
	if got := read("by-admin"); len(got.Status.Conditions) != 0 || len(got.Status.Certificate) != 0 {
		t.Errorf("an administrator's kubelet-serving request was decided: %s", spew(got))
	}
	admin.must(200, "PUT", csrPath+"/by-admin/approval", approve(read("by-admin")))
	if got := settled("by-admin"); len(got.Status.Certificate) == 0 {
		t.Errorf("approved by hand, not signed: %s", spew(got))
	}

	// A node claiming what is not its own: denied, saying why.
	cases := []struct {
		name    string
		request []byte
		usages  []api.KeyUsage
		why     string
	}{
		{"apiserver-name", own([]string{"n1", "kubernetes.default.svc"}, net.ParseIP("10.0.0.1")), servingUsages,
			`subject alternative names DNS:kubernetes.default.svc are not addresses of node "n1"`},
		{"other-ip", own([]string{"n1"}, net.ParseIP("10.0.0.1"), net.ParseIP("10.96.0.1")), servingUsages,
			`subject alternative names IP:10.96.0.1 are not addresses of node "n1"`},
		{"client-usage", own([]string{"n1"}, net.ParseIP("10.0.0.1")), []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth, api.UsageClientAuth},
			"not a kubelet serving certificate request: usages did not match [digital signature key encipherment server auth]"},
		{"no-name", own(nil), servingUsages, "DNS or IP subjectAltName is required"},
	}
	for _, c := range cases {
		node.must(201, "POST", csrPath, newCSR(c.name, api.KubeletServingSignerName, c.request, c.usages...))
	}
	for _, c := range cases {
		if got := denied(c.name); !strings.Contains(got.Status.Conditions[0].Message, c.why) {
			t.Errorf("%s: message %q, want it to say %q", c.name, got.Status.Conditions[0].Message, c.why)
		}
	}
	// Another node's name: NodeRestriction refuses it on create, as in
	// Kubernetes (the approver would deny it too).
	other := newCSR("other-node", api.KubeletServingSignerName,
		requestPEM(t, "system:node:n2", []string{"system:nodes"}, []string{"n1"}, net.ParseIP("10.0.0.1")), servingUsages...)
	if r := node.do("POST", csrPath, other, ""); r.Code != 403 || !strings.Contains(string(r.Body), "can only create a node CSR with CN=system:node:n1") {
		t.Errorf("another node's name: %d %s", r.Code, r.Body)
	}
}

// TestCSRKubeletServingNotApprovedByDefault: without the flag, as in
// Kubernetes, nothing approves a kubelet-serving request, even a node's
// own; approved by hand, it is signed.
func TestCSRKubeletServingNotApprovedByDefault(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	read, settled, approve := csrHelpers(t, admin)
	node := servingNode(t, s, admin, "n1", api.NodeAddress{Type: api.NodeInternalIP, Address: "10.0.0.1"})
	node.must(201, "POST", csrPath, newCSR("own", api.KubeletServingSignerName,
		requestPEM(t, "system:node:n1", []string{"system:nodes"}, nil, net.ParseIP("10.0.0.1")), servingUsages...))
	// A kubelet client request filed after it is signed once the
	// controller has seen both.
	renewPEM, _, err := pki.NewCSR("system:node:n1", []string{"system:nodes"})
	if err != nil {
		t.Fatal(err)
	}
	node.must(201, "POST", csrPath, newCSR("client", api.KubeAPIServerClientKubeletSignerName, renewPEM, api.UsageDigitalSignature, api.UsageClientAuth))
	settled("client")
	if got := read("own"); len(got.Status.Conditions) != 0 || len(got.Status.Certificate) != 0 {
		t.Errorf("a kubelet-serving request was decided without --approve-kubelet-serving-certificates: %s", spew(got))
	}
	admin.must(200, "PUT", csrPath+"/own/approval", approve(read("own")))
	if got := settled("own"); len(got.Status.Certificate) == 0 {
		t.Errorf("approved by hand, not signed: %s", spew(got))
	}
}
