package validation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
)

func testCSRPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:node-a", Organization: []string{"system:nodes"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func testCertPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestValidateCSR(t *testing.T) {
	t.Parallel()
	req := testCSRPEM(t)
	valid := func() *api.CertificateSigningRequest {
		return &api.CertificateSigningRequest{
			ObjectMeta: api.ObjectMeta{Name: "node-csr-abc"},
			Spec: api.CertificateSigningRequestSpec{Request: req, SignerName: api.KubeAPIServerClientKubeletSignerName,
				Usages: []api.KeyUsage{api.UsageDigitalSignature, api.UsageClientAuth}},
		}
	}
	tampered := append([]byte(nil), req...)
	block, _ := pem.Decode(tampered)
	block.Bytes[len(block.Bytes)-3] ^= 0xff // inside the signature
	tampered = pem.EncodeToMemory(block)
	tests := []struct {
		name   string
		mutate func(*api.CertificateSigningRequest)
		want   []string
	}{
		{"valid", func(*api.CertificateSigningRequest) {}, nil},
		{"any name", func(c *api.CertificateSigningRequest) { c.Name = "Node CSR #1" }, nil},
		{"signerName required", func(c *api.CertificateSigningRequest) { c.Spec.SignerName = "" }, []string{"spec.signerName: Required value"}},
		{"signerName shape", func(c *api.CertificateSigningRequest) { c.Spec.SignerName = "example/signer" }, []string{
			`spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots`}},
		{"signerName needs one slash", func(c *api.CertificateSigningRequest) { c.Spec.SignerName = "example.com" }, []string{
			`spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`}},
		{"signerName labels", func(c *api.CertificateSigningRequest) { c.Spec.SignerName = "Example.com/Signer" }, []string{
			`spec.signerName: Invalid value: "Example.com": validating label "Example": a lowercase RFC 1123 label ...`,
			`spec.signerName: Invalid value: "Signer": validating label "Signer": a lowercase RFC 1123 subdomain ...`}},
		{"legacy signer", func(c *api.CertificateSigningRequest) { c.Spec.SignerName = api.LegacyUnknownSignerName }, []string{
			`spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version`}},
		{"request must be PEM", func(c *api.CertificateSigningRequest) { c.Spec.Request = []byte("hi") }, []string{
			`spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST`}},
		{"request must be a CSR block", func(c *api.CertificateSigningRequest) { c.Spec.Request = testCertPEM(t) }, []string{
			`spec.request: Invalid value: []byte{...: PEM block type must be CERTIFICATE REQUEST`}},
		{"signature must verify", func(c *api.CertificateSigningRequest) { c.Spec.Request = tampered }, []string{
			`spec.request: Invalid value: []byte{...: x509: ECDSA verification failure`}},
		{"usages", func(c *api.CertificateSigningRequest) {
			c.Spec.Usages = []api.KeyUsage{api.UsageClientAuth, "flying", api.UsageClientAuth}
		}, []string{
			`spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", ...`,
			`spec.usages[2]: Duplicate value: "client auth"`,
		}},
		{"usages required", func(c *api.CertificateSigningRequest) { c.Spec.Usages = nil }, []string{"spec.usages: Required value"}},
		{"short expiration", func(c *api.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr(int32(599)) }, []string{
			"spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"}},
		{"conditions", func(c *api.CertificateSigningRequest) {
			c.Status.Conditions = []api.CertificateSigningRequestCondition{
				{Type: api.CertificateApproved, Status: api.ConditionFalse},
				{Type: api.CertificateDenied, Status: api.ConditionTrue},
				{Type: "Custom"},
				{Type: "Custom", Status: "Maybe"},
				{Status: api.ConditionTrue},
			}
		}, []string{
			`status.conditions[0].status: Unsupported value: "False": supported values: "True"`,
			`status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive`,
			"status.conditions[2].status: Required value",
			`status.conditions[3].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"`,
			`status.conditions[3].type: Duplicate value: "Custom"`,
			"status.conditions[4].type: Required value",
		}},
		{"certificate must be PEM certificates", func(c *api.CertificateSigningRequest) { c.Status.Certificate = []byte("nope") }, []string{
			`status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block`}},
	}
	for _, tc := range tests {
		c := valid()
		tc.mutate(c)
		checkErrs(t, tc.name, Validate(c), tc.want)
	}
}

func TestValidateCSRUpdates(t *testing.T) {
	t.Parallel()
	old := &api.CertificateSigningRequest{
		ObjectMeta: api.ObjectMeta{Name: "csr", ResourceVersion: "3"},
		Spec: api.CertificateSigningRequestSpec{Request: testCSRPEM(t), SignerName: api.KubeAPIServerClientKubeletSignerName,
			Usages: []api.KeyUsage{api.UsageClientAuth}, Username: "system:bootstrap:abcdef"},
	}
	approve := func(c *api.CertificateSigningRequest) *api.CertificateSigningRequest {
		c = api.DeepCopy(c)
		c.Status.Conditions = append(c.Status.Conditions, api.CertificateSigningRequestCondition{
			Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "AutoApproved"})
		return c
	}
	cert := testCertPEM(t)

	// Approval goes through the approval subresource only.
	checkErrs(t, "approve via update", ValidateUpdate(approve(old), old), []string{
		`status.conditions: Forbidden: updates may not add a condition of type "Approved"`})
	checkErrs(t, "approve via status", ValidateStatusUpdate(approve(old), old), []string{
		`status.conditions: Forbidden: updates may not add a condition of type "Approved"`})
	checkErrs(t, "approve", ValidateCertificateSigningRequestApprovalUpdate(approve(old), old), nil)

	approved := approve(old)
	changed := api.DeepCopy(approved)
	changed.Status.Conditions[0].Reason = "Other"
	checkErrs(t, "modify approval", ValidateStatusUpdate(changed, approved), []string{
		`status.conditions: Forbidden: updates may not modify a condition of type "Approved"...`})
	removed := api.DeepCopy(approved)
	removed.Status.Conditions = nil
	checkErrs(t, "remove approval", ValidateCertificateSigningRequestApprovalUpdate(removed, approved), []string{
		`status.conditions: Forbidden: updates may not remove a condition of type "Approved"`})
	deny := api.DeepCopy(approved)
	deny.Status.Conditions = append(deny.Status.Conditions, api.CertificateSigningRequestCondition{Type: api.CertificateDenied, Status: api.ConditionTrue})
	checkErrs(t, "deny after approval", ValidateCertificateSigningRequestApprovalUpdate(deny, approved), []string{
		`status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive`})

	// The certificate goes through the status subresource, once.
	issued := api.DeepCopy(approved)
	issued.Status.Certificate = cert
	checkErrs(t, "issue via update", ValidateUpdate(issued, approved), []string{
		"status.certificate: Forbidden: updates may not set certificate content"})
	checkErrs(t, "issue", ValidateStatusUpdate(issued, approved), nil)
	reissued := api.DeepCopy(issued)
	reissued.Status.Certificate = testCertPEM(t)
	checkErrs(t, "reissue", ValidateStatusUpdate(reissued, issued), []string{
		"status.certificate: Forbidden: updates may not modify existing certificate content"})
	bad := api.DeepCopy(approved)
	bad.Status.Certificate = []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	checkErrs(t, "bad certificate", ValidateStatusUpdate(bad, approved), []string{
		`status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"`})

	// The spec is fixed on every path.
	for name, fn := range map[string]func(a, b api.Object) []string{
		"update": func(a, b api.Object) []string { return errStrings(ValidateUpdate(a, b)) },
		"status": func(a, b api.Object) []string { return errStrings(ValidateStatusUpdate(a, b)) },
		"approval": func(a, b api.Object) []string {
			return errStrings(ValidateCertificateSigningRequestApprovalUpdate(a.(*api.CertificateSigningRequest), b.(*api.CertificateSigningRequest)))
		},
	} {
		swapped := api.DeepCopy(approved)
		swapped.Spec.Username = "system:node:node-b"
		got := fn(swapped, approved)
		if len(got) != 1 || got[0] != "spec: Invalid value: field is immutable" {
			t.Errorf("%s: changing spec.username gave %q", name, got)
		}
	}

	// What is already stored is tolerated: a legacy signer stays valid.
	legacy := api.DeepCopy(old)
	legacy.Spec.SignerName = api.LegacyUnknownSignerName
	legacy2 := api.DeepCopy(legacy)
	legacy2.Labels = map[string]string{"a": "b"}
	checkErrs(t, "stored legacy signer", ValidateUpdate(legacy2, legacy), nil)
}

func errStrings(l field.ErrorList) []string {
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = e.Error()
	}
	return out
}
