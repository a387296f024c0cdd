package admission

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
)

// signerGrants allows "verb signers/NAME" for the listed "verb NAME"
// entries and records every question it is asked.
type signerGrants struct {
	allow []string
	fail  bool
	asked []string
}

func (g *signerGrants) Authorize(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	q := a.Verb + " " + a.Name
	g.asked = append(g.asked, q)
	if g.fail {
		return authz.NoOpinion, "", errors.New("authorizer down")
	}
	if a.APIGroup != api.CertificatesGroupName || a.Resource != "signers" || a.APIVersion != "*" || !a.IsResourceRequest {
		return authz.NoOpinion, "", nil
	}
	if slices.Contains(g.allow, q) {
		return authz.Allow, "", nil
	}
	return authz.NoOpinion, "", nil
}

func csrRequestPEM(t *testing.T, orgs ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "u", Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func TestCertificateApprovalAndSigning(t *testing.T) {
	t.Parallel()
	csrs := resourceInfo(t, api.CertificatesGroupName, "certificatesigningrequests")
	alice := &request.User{Name: "alice"}
	stored := &api.CertificateSigningRequest{ObjectMeta: api.ObjectMeta{Name: "x"},
		Spec: api.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client"}}
	approved := api.DeepCopy(stored)
	approved.Status.Conditions = []api.CertificateSigningRequestCondition{{Type: api.CertificateApproved, Status: api.ConditionTrue}}
	// A write to /approval that also claims another signer is judged by the stored one.
	otherSigner := api.DeepCopy(approved)
	otherSigner.Spec.SignerName = "example.com/mine"
	withCert := api.DeepCopy(stored)
	withCert.Status.Certificate = []byte("cert")
	labelled := api.DeepCopy(stored)
	labelled.Labels = map[string]string{"a": "b"}

	tests := []struct {
		name      string
		plugin    func(*signerGrants) Validator
		sub       string
		obj       *api.CertificateSigningRequest
		user      *request.User
		grants    signerGrants
		wantErr   string
		wantAsked []string
	}{
		{name: "approve refused", plugin: approval, sub: "approval", obj: approved, user: alice,
			wantErr:   `certificatesigningrequests.certificates.k8s.io "x" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`,
			wantAsked: []string{"approve kubernetes.io/kube-apiserver-client", "approve kubernetes.io/*"}},
		{name: "approve on the signer", plugin: approval, sub: "approval", obj: approved, user: alice,
			grants: signerGrants{allow: []string{"approve kubernetes.io/kube-apiserver-client"}}, wantAsked: []string{"approve kubernetes.io/kube-apiserver-client"}},
		{name: "approve on the domain", plugin: approval, sub: "approval", obj: approved, user: alice,
			grants: signerGrants{allow: []string{"approve kubernetes.io/*"}}, wantAsked: []string{"approve kubernetes.io/kube-apiserver-client", "approve kubernetes.io/*"}},
		{name: "approve judged by the stored signer", plugin: approval, sub: "approval", obj: otherSigner, user: alice,
			grants:  signerGrants{allow: []string{"approve example.com/mine", "approve example.com/*"}},
			wantErr: `user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`},
		{name: "sign does not approve", plugin: approval, sub: "approval", obj: approved, user: alice,
			grants: signerGrants{allow: []string{"sign kubernetes.io/*"}}, wantErr: "user not permitted to approve"},
		{name: "authorizer error refuses", plugin: approval, sub: "approval", obj: approved, user: alice,
			grants: signerGrants{fail: true, allow: []string{"approve kubernetes.io/*"}}, wantErr: "user not permitted to approve"},
		{name: "approval ignores other subresources", plugin: approval, sub: "status", obj: approved, user: alice},
		{name: "in-process write", plugin: approval, sub: "approval", obj: approved},

		{name: "certificate refused", plugin: signing, sub: "status", obj: withCert, user: alice,
			wantErr: `certificatesigningrequests.certificates.k8s.io "x" is forbidden: user not permitted to sign requests with signerName "kubernetes.io/kube-apiserver-client"`},
		{name: "condition refused", plugin: signing, sub: "status", obj: approved, user: alice, wantErr: "user not permitted to sign"},
		{name: "sign on the domain", plugin: signing, sub: "status", obj: withCert, user: alice, grants: signerGrants{allow: []string{"sign kubernetes.io/*"}}},
		{name: "status without certificate or condition change", plugin: signing, sub: "status", obj: labelled, user: alice, wantAsked: []string{}},
		{name: "signing ignores the main resource", plugin: signing, sub: "", obj: withCert, user: alice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := tt.grants
			a := &Attributes{Operation: Update, Resource: csrs, Subresource: tt.sub, Name: "x", Object: tt.obj, OldObject: stored, User: tt.user}
			err := tt.plugin(&g).Validate(context.Background(), a)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got %v, want a Forbidden containing %q", err, tt.wantErr)
			}
			if tt.wantAsked != nil && !slices.Equal(g.asked, tt.wantAsked) {
				t.Errorf("asked %q, want %q", g.asked, tt.wantAsked)
			}
		})
	}
}

func approval(g *signerGrants) Validator { return &CertificateApproval{Authorizer: g} }
func signing(g *signerGrants) Validator  { return &CertificateSigning{Authorizer: g} }

func TestCertificateSubjectRestriction(t *testing.T) {
	t.Parallel()
	csrs := resourceInfo(t, api.CertificatesGroupName, "certificatesigningrequests")
	tests := []struct {
		name    string
		signer  string
		request []byte
		sub     string
		wantErr string
	}{
		{name: "system:masters client", signer: api.KubeAPIServerClientSignerName, request: csrRequestPEM(t, "dev", "system:masters"),
			wantErr: `certificatesigningrequests.certificates.k8s.io "x" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`},
		{name: "other groups", signer: api.KubeAPIServerClientSignerName, request: csrRequestPEM(t, "dev")},
		{name: "other signer", signer: "example.com/signer", request: csrRequestPEM(t, "system:masters")},
		{name: "kubelet signer", signer: api.KubeAPIServerClientKubeletSignerName, request: csrRequestPEM(t, "system:masters")},
		{name: "unparsable", signer: api.KubeAPIServerClientSignerName, request: []byte("junk"),
			wantErr: `"x" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST`},
		{name: "subresource", signer: api.KubeAPIServerClientSignerName, request: csrRequestPEM(t, "system:masters"), sub: "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &api.CertificateSigningRequest{ObjectMeta: api.ObjectMeta{Name: "x"},
				Spec: api.CertificateSigningRequestSpec{SignerName: tt.signer, Request: tt.request}}
			p := &CertificateSubjectRestriction{}
			if !p.Handles(Create) || p.Handles(Update) {
				t.Fatal("CertificateSubjectRestriction handles creates only")
			}
			err := p.Validate(context.Background(), &Attributes{Operation: Create, Resource: csrs, Subresource: tt.sub, Object: csr,
				User: &request.User{Name: "alice"}})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got %v, want a Forbidden containing %q", err, tt.wantErr)
			}
		})
	}
}
