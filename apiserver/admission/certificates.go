package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Kubernetes' three certificates.k8s.io admission plugins
// (plugin/pkg/admission/certificates): who may write to the
// certificatesigningrequests/approval and /status subresources is RBAC's
// business, but which signer's requests one may approve or sign is asked
// of the authorizer on the synthetic resource signers (verbs approve and
// sign, the name the signer's or "DOMAIN/*"), and nobody may ask the
// kube-apiserver-client signer for a system:masters certificate. Without
// them, anyone allowed to approve CSRs at all could approve their own
// request to any signer.
//
// A write without a user is the apiserver's own (apiserver/csr, the
// approving and signing controllers kube runs in kube-controller-manager)
// and passes: those controllers check each signer's rules themselves.

const csrResource = "certificatesigningrequests"

func isCSR(a *Attributes) bool {
	return a.Resource.Group == api.CertificatesGroupName && a.Resource.Resource == csrResource
}

// CertificateApproval refuses an update of certificatesigningrequests/NAME/approval
// by a user who may not approve on signers/SIGNER (or signers/DOMAIN/*),
// the signer read from the stored request.
type CertificateApproval struct {
	Authorizer authz.Authorizer
	Log        *slog.Logger
}

var _ Validator = (*CertificateApproval)(nil)

// Name implements Plugin.
func (*CertificateApproval) Name() string { return "CertificateApproval" }

// Handles implements Plugin: updates only.
func (*CertificateApproval) Handles(op Operation) bool { return op == Update }

// Validate implements Validator.
func (p *CertificateApproval) Validate(ctx context.Context, a *Attributes) error {
	if !isCSR(a) || a.Subresource != "approval" || a.User == nil {
		return nil
	}
	// The stored request's signer: the one a write to /approval cannot change.
	old, ok := a.OldObject.(*api.CertificateSigningRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	if !authorizedForSigner(ctx, p.Authorizer, p.Log, a.User, "approve", old.Spec.SignerName) {
		return NewForbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// CertificateSigning refuses an update of certificatesigningrequests/NAME/status
// that changes the certificate or the conditions by a user who may not
// sign on signers/SIGNER (or signers/DOMAIN/*); likewise an update of
// podcertificaterequests/NAME/status that changes the status.
type CertificateSigning struct {
	Authorizer authz.Authorizer
	Log        *slog.Logger
}

var _ Validator = (*CertificateSigning)(nil)

// Name implements Plugin.
func (*CertificateSigning) Name() string { return "CertificateSigning" }

// Handles implements Plugin: updates only.
func (*CertificateSigning) Handles(op Operation) bool { return op == Update }

// Validate implements Validator.
func (p *CertificateSigning) Validate(ctx context.Context, a *Attributes) error {
	if a.Resource.Group == api.CertificatesGroupName && a.Resource.Resource == "podcertificaterequests" && a.Subresource == "status" && a.User != nil {
		return p.validatePodCertificateRequestStatus(ctx, a)
	}
	if !isCSR(a) || a.Subresource != "status" || a.User == nil {
		return nil
	}
	old, ok := a.OldObject.(*api.CertificateSigningRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	csr, ok := a.Object.(*api.CertificateSigningRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if bytes.Equal(old.Status.Certificate, csr.Status.Certificate) && sameConditions(old.Status.Conditions, csr.Status.Conditions) {
		return nil
	}
	if !authorizedForSigner(ctx, p.Authorizer, p.Log, a.User, "sign", old.Spec.SignerName) {
		return NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// sameConditions compares conditions by their serialized form, which is
// what the API distinguishes (kube's semantic equality: times to the second).
func sameConditions(a, b []api.CertificateSigningRequestCondition) bool {
	if len(a) != len(b) {
		return false
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// CertificateSubjectRestriction refuses creating a request to the
// kubernetes.io/kube-apiserver-client signer for a subject in
// system:masters: a certificate for that group is the whole cluster, and
// no approver should be one click away from issuing it.
type CertificateSubjectRestriction struct{}

var _ Validator = (*CertificateSubjectRestriction)(nil)

// Name implements Plugin.
func (*CertificateSubjectRestriction) Name() string { return "CertificateSubjectRestriction" }

// Handles implements Plugin: creates only.
func (*CertificateSubjectRestriction) Handles(op Operation) bool { return op == Create }

// Validate implements Validator.
func (p *CertificateSubjectRestriction) Validate(ctx context.Context, a *Attributes) error {
	if !isCSR(a) || a.Subresource != "" {
		return nil
	}
	csr, ok := a.Object.(*api.CertificateSigningRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if csr.Spec.SignerName != api.KubeAPIServerClientSignerName {
		return nil
	}
	req, err := validation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	if slices.Contains(req.Subject.Organization, authz.SystemPrivilegedGroup) {
		return NewForbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed", api.KubeAPIServerClientSignerName))
	}
	return nil
}

// authorizedForSigner is kube's IsAuthorizedForSignerName: verb on
// signers/SIGNER in certificates.k8s.io, or failing that on
// signers/DOMAIN/* (the part of the name before its first slash), so
// that a role may cover every signer of a domain. An authorizer error
// counts as a refusal.
func authorizedForSigner(ctx context.Context, az authz.Authorizer, log *slog.Logger, u *request.User, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		attrs := authz.Attributes{User: u, Verb: verb, APIGroup: api.CertificatesGroupName, APIVersion: "*",
			Resource: "signers", Name: name, IsResourceRequest: true}
		d, reason, err := az.Authorize(ctx, attrs)
		if err != nil && log != nil {
			log.Debug("cannot authorize signer access", "verb", verb, "signer", name, "reason", reason, "err", err)
		}
		if err == nil && d == authz.Allow {
			return true
		}
	}
	return false
}
