package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
)

// validatePodCertificateRequestStatus is kube's check on
// podcertificaterequests/NAME/status (its status strategy's ValidateUpdate):
// a write that changes the status — issuing a certificate, denying, failing
// — needs "sign" on signers/SIGNER (or signers/DOMAIN/*), else 422 with
// kube's message on spec.signerName.
func (p *CertificateSigning) validatePodCertificateRequestStatus(ctx context.Context, a *Attributes) error {
	old, ok := a.OldObject.(*api.PodCertificateRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type PodCertificateRequest, got: %T", a.OldObject))
	}
	pcr, ok := a.Object.(*api.PodCertificateRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("expected type PodCertificateRequest, got: %T", a.Object))
	}
	before, errA := json.Marshal(old.Status)
	after, errB := json.Marshal(pcr.Status)
	if errA == nil && errB == nil && bytes.Equal(before, after) {
		return nil
	}
	if authorizedForSigner(ctx, p.Authorizer, p.Log, a.User, "sign", old.Spec.SignerName) {
		return nil
	}
	return apierrors.NewInvalid(apierrors.GroupKind{Group: api.CertificatesGroupName, Kind: "PodCertificateRequest"}, a.Name, field.ErrorList{
		field.Forbidden(field.NewPath("spec", "signerName"), fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", a.User.Name, old.Spec.SignerName)),
	})
}
