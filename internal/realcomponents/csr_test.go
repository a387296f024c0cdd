package realcomponents

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/pki"
)

// csrBody is a CertificateSigningRequest named name for CN=cn, O=orgs
// with DNS subject alternative names, as JSON, with status when given.
func csrBody(t *testing.T, name, signer string, request []byte, status *api.CertificateSigningRequestStatus, usages ...api.KeyUsage) string {
	t.Helper()
	csr := api.CertificateSigningRequest{
		TypeMeta:   api.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec:       api.CertificateSigningRequestSpec{Request: request, SignerName: signer, Usages: usages},
	}
	if status != nil {
		csr.Status = *status
	}
	b, err := json.Marshal(csr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// requestPEM is a PEM certificate request for CN=cn, O=orgs, DNS=dns.
func requestPEM(t *testing.T, cn string, orgs, dns []string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// TestCSRAdmissionAsKube sends kube-apiserver v1.37 and minik8s the CSR
// writes of issue 26 as a user who may create CSRs and update their
// approval and status but holds no verb on any signer, and compares the
// refusals word for word: a system:masters subject for the
// kube-apiserver-client signer (CertificateSubjectRestriction), approving
// without approve on the signer (CertificateApproval), writing a
// certificate or a condition without sign (CertificateSigning); then
// approve on signers/kubernetes.io/* lets her approve, on both, and still
// not sign.
func TestCSRAdmissionAsKube(t *testing.T) {
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	both := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	const (
		rbac = "/apis/rbac.authorization.k8s.io/v1"
		csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	)
	both.must(t, 201, "POST", rbac+"/clusterroles", `{"metadata":{"name":"csr-writer"},"rules":[
		{"apiGroups":["certificates.k8s.io"],"resources":["certificatesigningrequests"],"verbs":["create","get"]},
		{"apiGroups":["certificates.k8s.io"],"resources":["certificatesigningrequests/approval","certificatesigningrequests/status"],"verbs":["update"]}]}`)
	both.must(t, 201, "POST", rbac+"/clusterrolebindings", `{"metadata":{"name":"csr-writer-mallory"},
		"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"mallory"}],
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"csr-writer"}}`)
	mallory := both.as(t, "mallory", "dev")
	usages := []api.KeyUsage{api.UsageDigitalSignature, api.UsageKeyEncipherment, api.UsageServerAuth, api.UsageClientAuth}

	// system:masters for the kube-apiserver-client signer: refused; for
	// another signer: created.
	mastersPEM := requestPEM(t, "mallory", []string{"dev", "system:masters"}, []string{"kubernetes.default.svc"})
	masters := csrBody(t, "masters", api.KubeAPIServerClientSignerName, mastersPEM, nil, usages...)
	mallory.eventually(t, 403, "POST", csrs, masters, "system:masters")
	mallory.sameRefusal(t, "POST", csrs, masters)
	mallory.must(t, 201, "POST", csrs, csrBody(t, "masters-elsewhere", "example.com/signer", mastersPEM, nil, usages...))

	// Without system:masters: created, but neither approved nor signed by her.
	mitmPEM := requestPEM(t, "mallory", []string{"dev"}, []string{"kubernetes.default.svc"})
	mallory.must(t, 201, "POST", csrs, csrBody(t, "mitm", api.KubeAPIServerClientSignerName, mitmPEM, nil, usages...))
	approved := csrBody(t, "mitm", api.KubeAPIServerClientSignerName, mitmPEM, &api.CertificateSigningRequestStatus{
		Conditions: []api.CertificateSigningRequestCondition{{Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "Mine", Message: "mine"}}}, usages...)
	mallory.sameRefusal(t, "PUT", csrs+"/mitm/approval", approved)
	forged, err := pki.NewCA("forged", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	signed := csrBody(t, "mitm", api.KubeAPIServerClientSignerName, mitmPEM, &api.CertificateSigningRequestStatus{Certificate: forged.CertPEM()}, usages...)
	mallory.sameRefusal(t, "PUT", csrs+"/mitm/status", signed)
	failed := csrBody(t, "mitm", api.KubeAPIServerClientSignerName, mitmPEM, &api.CertificateSigningRequestStatus{
		Conditions: []api.CertificateSigningRequestCondition{{Type: api.CertificateFailed, Status: api.ConditionTrue, Reason: "Forged"}}}, usages...)
	mallory.sameRefusal(t, "PUT", csrs+"/mitm/status", failed)
	// Another signer's requests: refused the same way, with its name.
	mallory.sameRefusal(t, "PUT", csrs+"/masters-elsewhere/approval", csrBody(t, "masters-elsewhere", "example.com/signer", mastersPEM,
		&api.CertificateSigningRequestStatus{Conditions: []api.CertificateSigningRequestCondition{{Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "Mine"}}}, usages...))

	// approve on signers/DOMAIN/*: she may approve, still not sign. (An
	// example.com request: minik8s' own signer leaves it alone.)
	both.must(t, 201, "POST", rbac+"/clusterroles", `{"metadata":{"name":"wildcard-approver"},"rules":[
		{"apiGroups":["certificates.k8s.io"],"resources":["signers"],"resourceNames":["kubernetes.io/*","example.com/*"],"verbs":["approve"]}]}`)
	both.must(t, 201, "POST", rbac+"/clusterrolebindings", `{"metadata":{"name":"wildcard-approver-mallory"},
		"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"mallory"}],
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"wildcard-approver"}}`)
	mallory.eventually(t, 200, "PUT", csrs+"/mitm/approval", approved, "")
	elsewhere := &api.CertificateSigningRequestStatus{Conditions: []api.CertificateSigningRequestCondition{{Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "Mine"}}}
	mallory.must(t, 200, "PUT", csrs+"/masters-elsewhere/approval", csrBody(t, "masters-elsewhere", "example.com/signer", mastersPEM, elsewhere, usages...))
	elsewhere.Certificate = forged.CertPEM()
	mallory.sameRefusal(t, "PUT", csrs+"/masters-elsewhere/status", csrBody(t, "masters-elsewhere", "example.com/signer", mastersPEM, elsewhere, usages...))
}
