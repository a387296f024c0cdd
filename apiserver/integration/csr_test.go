package integration

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/pki"
)

// TestCSRApprovalSubresource: /approval writes only the approval
// conditions (the certificate and the spec stay), and /status may not
// approve.
func TestCSRApprovalSubresource(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	c := newClient(t, s)
	csrPEM, _, err := pki.NewCSR("someone", nil)
	if err != nil {
		t.Fatal(err)
	}
	const path = "/apis/certificates.k8s.io/v1/certificatesigningrequests/x"
	c.must(201, "POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", api.CertificateSigningRequest{
		TypeMeta:   api.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: api.ObjectMeta{Name: "x"},
		Spec: api.CertificateSigningRequestSpec{Request: csrPEM, SignerName: "example.com/signer",
			Usages: []api.KeyUsage{api.KeyUsage("client auth")}},
	})
	// A list may select on the signer, as kube's (the conformance spec
	// "should support CSR API operations" does).
	for sel, want := range map[string]int{"example.com/signer": 1, "example.com/other": 0} {
		list := c.must(200, "GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector=spec.signerName%3D"+sel, nil)
		if items, _ := list["items"].([]any); len(items) != want {
			t.Errorf("fieldSelector spec.signerName=%s: %d items, want %d", sel, len(items), want)
		}
	}
	read := func() api.CertificateSigningRequest {
		var csr api.CertificateSigningRequest
		b, _ := json.Marshal(c.must(200, "GET", path, nil))
		if err := json.Unmarshal(b, &csr); err != nil {
			t.Fatal(err)
		}
		return csr
	}
	approved := read()
	approved.Status.Conditions = []api.CertificateSigningRequestCondition{{Type: api.CertificateApproved,
		Status: api.ConditionTrue, Reason: "ByTest"}}
	if r := c.do("PUT", path+"/status", approved, ""); r.Code != 422 {
		t.Fatalf("/status approving: %d %s, want 422", r.Code, r.Body)
	}
	approved.Status.Certificate = []byte("not the approver's to set")
	approved.Spec.SignerName = "example.com/other"
	c.must(200, "PUT", path+"/approval", approved)
	got := read()
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != api.CertificateApproved {
		t.Fatalf("conditions = %+v, want Approved", got.Status.Conditions)
	}
	if len(got.Status.Certificate) != 0 || got.Spec.SignerName != "example.com/signer" {
		t.Fatalf("approval changed the certificate (%q) or the spec (%q)", got.Status.Certificate, got.Spec.SignerName)
	}
}
