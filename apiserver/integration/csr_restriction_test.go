package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/pki"
)

const csrPath = "/apis/certificates.k8s.io/v1/certificatesigningrequests"

// requestPEM is a PEM certificate request for CN=cn, O=orgs with the
// given DNS and IP subject alternative names.
func requestPEM(t *testing.T, cn string, orgs, dns []string, ips ...net.IP) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns, IPAddresses: ips}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// newCSR is a CertificateSigningRequest object named name.
func newCSR(name, signer string, request []byte, usages ...api.KeyUsage) api.CertificateSigningRequest {
	return api.CertificateSigningRequest{
		TypeMeta:   api.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec:       api.CertificateSigningRequestSpec{Request: request, SignerName: signer, Usages: usages},
	}
}

// TestCSRSignerRestrictions is issue 26's CSR item. A user who may create
// CSRs and update their approval and status (what the metrics server's
// account may) used to get any certificate the cluster CA would sign:
// O=system:masters, server auth, DNS:kubernetes.default.svc. Now, as in
// Kubernetes, a system:masters subject for the kube-apiserver-client
// signer is refused on create (CertificateSubjectRestriction), approving
// needs approve on signers/NAME or signers/DOMAIN/* (CertificateApproval),
// writing the certificate needs sign (CertificateSigning), and the signer
// marks an approved request of a shape it does not issue Failed rather
// than signing it; the kubelet client auto-approver only approves a
// request of a kubelet client's exact shape, and a valid one still goes
// through end to end.
func TestCSRSignerRestrictions(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	message := func(r response) string {
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m)
		msg, _ := m["message"].(string)
		return msg
	}
	read, settled, approve := csrHelpers(t, admin)

	// mallory may create, read, approve and sign CSRs as far as RBAC on
	// certificatesigningrequests goes, but holds no verb on any signer.
	admin.must(201, "POST", rbacPath+"/clusterroles", map[string]any{"metadata": map[string]any{"name": "csr-writer"},
		"rules": []any{
			map[string]any{"apiGroups": []string{"certificates.k8s.io"}, "resources": []string{"certificatesigningrequests"}, "verbs": []string{"create", "get"}},
			map[string]any{"apiGroups": []string{"certificates.k8s.io"}, "resources": []string{"certificatesigningrequests/approval", "certificatesigningrequests/status"}, "verbs": []string{"update"}},
		}})
	bindCluster := func(name, user, role string) {
		admin.must(201, "POST", rbacPath+"/clusterrolebindings", map[string]any{"metadata": map[string]any{"name": name},
			"subjects": []any{map[string]any{"kind": "User", "name": user}},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}})
	}
	bindCluster("csr-writer-mallory", "mallory", "csr-writer")
	mallory := &tclient{t: t, base: s.SecureURL(), hc: userClient(t, s, "mallory")}

	// The issue's certificate: system:masters, server auth, the
	// apiserver's name. Refused on create.
	masters := newCSR("masters", api.KubeAPIServerClientSignerName,
		requestPEM(t, "mallory", []string{"system:masters"}, []string{"kubernetes.default.svc"}),
		api.UsageDigitalSignature, api.UsageKeyEncipherment, api.UsageServerAuth, api.UsageClientAuth)
	var r response
	waitForState(t, 10*time.Second, func() bool {
		r = mallory.do("POST", csrPath, masters, "")
		// Until the RBAC caches hold her grant, the authorizer refuses her.
		return r.Code == 201 || (r.Code == 403 && strings.Contains(message(r), "system:masters"))
	}, func() string { return string(r.Body) })
	if want := `certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`; r.Code != 403 || message(r) != want {
		t.Errorf("system:masters request: %d\n got %q\nwant %q", r.Code, message(r), want)
	}
	// Another signer may issue any subject (its own approvers decide).
	masters.Name, masters.Spec.SignerName = "masters-elsewhere", "example.com/signer"
	mallory.must(201, "POST", csrPath, masters)

	// Without system:masters the request is created, but mallory may not
	// approve it, nor write a certificate into it.
	mitm := newCSR("mitm", api.KubeAPIServerClientSignerName,
		requestPEM(t, "mallory", []string{"dev"}, []string{"kubernetes.default.svc"}),
		api.UsageDigitalSignature, api.UsageKeyEncipherment, api.UsageServerAuth, api.UsageClientAuth)
	mallory.must(201, "POST", csrPath, mitm)
	r = mallory.do("PUT", csrPath+"/mitm/approval", approve(read("mitm")), "")
	if want := `certificatesigningrequests.certificates.k8s.io "mitm" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`; r.Code != 403 || message(r) != want {
		t.Errorf("approval without approve on the signer: %d\n got %q\nwant %q", r.Code, message(r), want)
	}
	if o := r.obj(t); o["reason"] != "Forbidden" || o["details"].(map[string]any)["kind"] != "certificatesigningrequests" {
		t.Errorf("approval refusal status: %s", r.Body)
	}
	forged, _, err := s.PKI().CA.IssueClient("mallory", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	signed := read("mitm")
	signed.Status.Certificate = forged
	r = mallory.do("PUT", csrPath+"/mitm/status", signed, "")
	if want := `certificatesigningrequests.certificates.k8s.io "mitm" is forbidden: user not permitted to sign requests with signerName "kubernetes.io/kube-apiserver-client"`; r.Code != 403 || message(r) != want {
		t.Errorf("certificate without sign on the signer: %d\n got %q\nwant %q", r.Code, message(r), want)
	}
	failed := read("mitm")
	failed.Status.Conditions = append(failed.Status.Conditions, api.CertificateSigningRequestCondition{
		Type: api.CertificateFailed, Status: api.ConditionTrue, Reason: "Forged"})
	if r = mallory.do("PUT", csrPath+"/mitm/status", failed, ""); r.Code != 403 {
		t.Errorf("a condition without sign on the signer: %d %s", r.Code, r.Body)
	}
	if got := read("mitm"); len(got.Status.Certificate) != 0 || len(got.Status.Conditions) != 0 {
		t.Errorf("refused writes changed the request: %s", spew(got))
	}

	// With approve on signers/kubernetes.io/* (the domain wildcard) she
	// may approve; the signer then refuses server auth: Failed, unsigned.
	admin.must(201, "POST", rbacPath+"/clusterroles", map[string]any{"metadata": map[string]any{"name": "kubernetes-io-approver"},
		"rules": []any{map[string]any{"apiGroups": []string{"certificates.k8s.io"}, "resources": []string{"signers"},
			"resourceNames": []string{"kubernetes.io/*"}, "verbs": []string{"approve"}}}})
	bindCluster("kubernetes-io-approver-mallory", "mallory", "kubernetes-io-approver")
	waitForState(t, 10*time.Second, func() bool {
		r = mallory.do("PUT", csrPath+"/mitm/approval", approve(read("mitm")), "")
		return r.Code == 200
	}, func() string { return string(r.Body) })
	got := settled("mitm")
	if len(got.Status.Certificate) != 0 || !hasConditionMessage(got, api.CertificateFailed, "SignerValidationFailure", "invalid usage for client certificate: server auth") {
		t.Errorf("server auth from the kube-apiserver-client signer: %s", spew(got))
	}
	// Still no sign: her approval does not let her write the certificate.
	signed = read("mitm")
	signed.Status.Certificate = forged
	if r = mallory.do("PUT", csrPath+"/mitm/status", signed, ""); r.Code != 403 {
		t.Errorf("certificate with approve only: %d %s", r.Code, r.Body)
	}
}

// TestCSRKubeletClientShape: the kubelet client auto-approver approves
// only a request of a kubelet client's exact shape (kube's
// IsKubeletClientCSR: no subject alternative name, client usages), even
// from a requester allowed to create nodeclient requests, and the signer
// marks such a request Failed when someone approves it by hand; a valid
// request is approved and signed as before.
func TestCSRKubeletClientShape(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := newClient(t, s)
	read, settled, approve := csrHelpers(t, admin)

	// A kubelet client request with a subject alternative name is not
	// auto-approved, though its requester (the admin) may create
	// nodeclient requests. The controller handles requests in order: once
	// the valid request made after it is signed, it has been seen.
	withSAN := newCSR("node-san", api.KubeAPIServerClientKubeletSignerName,
		requestPEM(t, "system:node:n1", []string{"system:nodes"}, []string{"kubernetes.default.svc"}),
		api.UsageDigitalSignature, api.UsageClientAuth)
	admin.must(201, "POST", csrPath, withSAN)
	withIP := newCSR("node-ip", api.KubeAPIServerClientKubeletSignerName,
		requestPEM(t, "system:node:n1", []string{"system:nodes"}, nil, net.ParseIP("10.0.0.1")),
		api.UsageDigitalSignature, api.UsageClientAuth)
	admin.must(201, "POST", csrPath, withIP)
	serverAuth := newCSR("node-server-auth", api.KubeAPIServerClientKubeletSignerName,
		requestPEM(t, "system:node:n1", []string{"system:nodes"}, nil),
		api.UsageDigitalSignature, api.UsageClientAuth, api.UsageServerAuth)
	admin.must(201, "POST", csrPath, serverAuth)
	csrPEM, keyPEM, err := pki.NewCSR("system:node:n1", []string{"system:nodes"})
	if err != nil {
		t.Fatal(err)
	}
	admin.must(201, "POST", csrPath, newCSR("node-ok", api.KubeAPIServerClientKubeletSignerName, csrPEM,
		api.UsageDigitalSignature, api.UsageClientAuth))
	ok := settled("node-ok")
	if !hasConditionMessage(ok, api.CertificateApproved, "AutoApproved", "Auto approving kubelet client certificate after SubjectAccessReview.") {
		t.Errorf("valid kubelet client request: %s", spew(ok))
	}
	if cert, err := pki.ParseCertPEM(ok.Status.Certificate); err != nil || cert.Subject.CommonName != "system:node:n1" {
		t.Errorf("issued certificate: %v %v", cert, err)
	} else if _, err := tls.X509KeyPair(ok.Status.Certificate, keyPEM); err != nil {
		t.Errorf("issued certificate does not match the key: %v", err)
	}
	// A node renewing its own certificate is approved as itself.
	node := &tclient{t: t, base: s.SecureURL(), hc: userClient(t, s, "system:node:n2", "system:nodes")}
	renewPEM, _, err := pki.NewCSR("system:node:n2", []string{"system:nodes"})
	if err != nil {
		t.Fatal(err)
	}
	node.must(201, "POST", csrPath, newCSR("node-renew", api.KubeAPIServerClientKubeletSignerName, renewPEM,
		api.UsageDigitalSignature, api.UsageKeyEncipherment, api.UsageClientAuth))
	if got := settled("node-renew"); len(got.Status.Certificate) == 0 ||
		!hasConditionMessage(got, api.CertificateApproved, "AutoApproved", "Auto approving self kubelet client certificate after SubjectAccessReview.") {
		t.Errorf("a node's own renewal: %s", spew(got))
	}
	for _, name := range []string{"node-san", "node-ip", "node-server-auth"} {
		if got := read(name); len(got.Status.Conditions) != 0 || len(got.Status.Certificate) != 0 {
			t.Errorf("%s was approved or signed: %s", name, spew(got))
		}
	}
	// Approved by hand, the signer refuses each shape with kube's message.
	for name, why := range map[string]string{"node-san": "DNS subjectAltNames are not allowed",
		"node-ip": "IP subjectAltNames are not allowed", "node-server-auth": "usages did not match [client auth digital signature key encipherment]"} {
		admin.must(200, "PUT", csrPath+"/"+name+"/approval", approve(read(name)))
		got := settled(name)
		if len(got.Status.Certificate) != 0 || !hasConditionMessage(got, api.CertificateFailed, "SignerValidationFailure", why) {
			t.Errorf("%s approved by hand: want Failed %q, got %s", name, why, spew(got))
		}
	}
}

// csrHelpers are the reads and writes the CSR tests share: read a CSR,
// wait until the apiserver's controller signed it or marked it Failed,
// add an Approved condition.
func csrHelpers(t *testing.T, admin *tclient) (read, settled func(string) api.CertificateSigningRequest, approve func(api.CertificateSigningRequest) api.CertificateSigningRequest) {
	read = func(name string) api.CertificateSigningRequest {
		t.Helper()
		var csr api.CertificateSigningRequest
		b, _ := json.Marshal(admin.must(200, "GET", csrPath+"/"+name, nil))
		if err := json.Unmarshal(b, &csr); err != nil {
			t.Fatal(err)
		}
		return csr
	}
	settled = func(name string) api.CertificateSigningRequest {
		t.Helper()
		var csr api.CertificateSigningRequest
		waitForState(t, 10*time.Second, func() bool {
			csr = read(name)
			return len(csr.Status.Certificate) > 0 || hasCondition(csr, api.CertificateFailed)
		}, func() string { return spew(csr) })
		return csr
	}
	approve = func(csr api.CertificateSigningRequest) api.CertificateSigningRequest {
		csr.Status.Conditions = append(csr.Status.Conditions, api.CertificateSigningRequestCondition{
			Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "ByHand", Message: "approved by the test"})
		return csr
	}
	return read, settled, approve
}

func hasCondition(csr api.CertificateSigningRequest, t api.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

func hasConditionMessage(csr api.CertificateSigningRequest, t api.RequestConditionType, reason, message string) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == api.ConditionTrue && c.Reason == reason && c.Message == message {
			return true
		}
	}
	return false
}

func spew(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
