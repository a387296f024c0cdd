package validation

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// validUsages are the key usages certificates.k8s.io/v1 accepts, sorted as
// Kubernetes lists them in its "supported values".
var validUsages = func() []string {
	u := []string{}
	for _, k := range []api.KeyUsage{
		api.UsageSigning, api.UsageDigitalSignature, api.UsageContentCommitment, api.UsageKeyEncipherment,
		api.UsageKeyAgreement, api.UsageDataEncipherment, api.UsageCertSign, api.UsageCRLSign,
		api.UsageEncipherOnly, api.UsageDecipherOnly, api.UsageAny, api.UsageServerAuth, api.UsageClientAuth,
		api.UsageCodeSigning, api.UsageEmailProtection, api.UsageSMIME, api.UsageIPsecEndSystem,
		api.UsageIPsecTunnel, api.UsageIPsecUser, api.UsageTimestamping, api.UsageOCSPSigning,
		api.UsageMicrosoftSGC, api.UsageNetscapeSGC,
	} {
		u = append(u, string(k))
	}
	sortStrings(u)
	return u
}()

// csrOptions are the relaxations Kubernetes applies per write path and for
// compatibility with what is already stored.
type csrOptions struct {
	// allowSettingApprovalConditions: the approval subresource.
	allowSettingApprovalConditions bool
	// allowSettingCertificate: the status subresource.
	allowSettingCertificate bool

	// Tolerated when the stored object already has the problem.
	allowBothApprovedAndDenied   bool
	allowLegacySignerName        bool
	allowDuplicateConditionTypes bool
	allowEmptyConditionType      bool
	allowArbitraryCertificate    bool
	allowUnknownUsages           bool
	allowDuplicateUsages         bool
}

// ParseCSR decodes the PEM "CERTIFICATE REQUEST" of a CSR's spec.request.
// Signers and approvers use it too, so they read the request exactly as
// validation did.
func ParseCSR(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// ValidateCertificateSigningRequest checks a CSR being created: a PEM
// request whose signature verifies, known non-repeated usages, a signer
// name of the form "example.com/name" (not the legacy one), a validity of
// at least ten minutes, and consistent conditions.
func ValidateCertificateSigningRequest(csr *api.CertificateSigningRequest) field.ErrorList {
	return validateCSR(csr, csrOptionsFor(csr, nil))
}

// ValidateCertificateSigningRequestUpdate checks an update of the main
// resource: the spec cannot change (on any update path), nor can the
// approval conditions or the certificate (those go through the approval and
// status subresources).
func ValidateCertificateSigningRequestUpdate(csr, old *api.CertificateSigningRequest) field.ErrorList {
	return validateCSRUpdate(csr, old, csrOptionsFor(csr, old))
}

// ValidateCertificateSigningRequestStatusUpdate checks a write to the status
// subresource, which may set status.certificate once.
func ValidateCertificateSigningRequestStatusUpdate(csr, old *api.CertificateSigningRequest) field.ErrorList {
	opts := csrOptionsFor(csr, old)
	opts.allowSettingCertificate = true
	return validateCSRUpdate(csr, old, opts)
}

// ValidateCertificateSigningRequestApprovalUpdate checks a write to the
// approval subresource, which may add an Approved or Denied condition.
func ValidateCertificateSigningRequestApprovalUpdate(csr, old *api.CertificateSigningRequest) field.ErrorList {
	opts := csrOptionsFor(csr, old)
	opts.allowSettingApprovalConditions = true
	return validateCSRUpdate(csr, old, opts)
}

func validateCSR(csr *api.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	anyName := func(string, bool) []string { return nil } // "We don't care what you call your certificate requests."
	errs := ValidateObjectMeta(&csr.ObjectMeta, false, anyName, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if req, err := ParseCSR(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), printable(csr.Spec.Request), err.Error()))
	} else if err := req.CheckSignature(); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), printable(csr.Spec.Request), err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(spec.Child("usages"), ""))
	}
	seen := map[api.KeyUsage]bool{}
	for i, u := range csr.Spec.Usages {
		if !opts.allowUnknownUsages && !slices.Contains(validUsages, string(u)) {
			errs = append(errs, field.NotSupported(spec.Child("usages").Index(i), string(u), validUsages))
		}
		if !opts.allowDuplicateUsages && seen[u] {
			errs = append(errs, field.Duplicate(spec.Child("usages").Index(i), string(u)))
		}
		seen[u] = true
	}
	if !opts.allowLegacySignerName && csr.Spec.SignerName == api.LegacyUnknownSignerName {
		errs = append(errs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, ValidateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateCSRConditions(csr, opts)...)
	if !opts.allowArbitraryCertificate {
		if err := validateCertificatePEM(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

func validateCSRConditions(csr *api.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "conditions")
	all := []string{api.ConditionTrue, api.ConditionFalse, api.ConditionUnknown}
	seen := map[api.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range csr.Status.Conditions {
		cp := p.Index(i)
		if !opts.allowEmptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(cp.Child("type"), ""))
		}
		allowed := all
		switch c.Type {
		case api.CertificateApproved, api.CertificateDenied, api.CertificateFailed:
			allowed = []string{api.ConditionTrue}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(cp.Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(cp.Child("status"), string(c.Status), allowed))
		}
		if !opts.allowBothApprovedAndDenied {
			switch c.Type {
			case api.CertificateApproved:
				approved = true
				if denied {
					errs = append(errs, field.Invalid(cp.Child("type"), string(c.Type), "Approved and Denied conditions are mutually exclusive"))
				}
			case api.CertificateDenied:
				denied = true
				if approved {
					errs = append(errs, field.Invalid(cp.Child("type"), string(c.Type), "Approved and Denied conditions are mutually exclusive"))
				}
			}
		}
		if !opts.allowDuplicateConditionTypes {
			if seen[c.Type] {
				errs = append(errs, field.Duplicate(cp.Child("type"), string(c.Type)))
			}
			seen[c.Type] = true
		}
	}
	return errs
}

func validateCSRUpdate(csr, old *api.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	errs := validateCSR(csr, opts)
	if !semanticEqual(csr.Spec, old.Spec) {
		// Kubernetes' strategies silently keep the stored spec on every
		// update path; refuse instead, so that no write can swap the
		// request (or the requester) of an approved CSR.
		errs = append(errs, field.Invalid(field.NewPath("spec"), field.OmitValue, fieldImmutableErrorMsg))
	}
	conditions := field.NewPath("status", "conditions")
	for _, t := range []api.RequestConditionType{api.CertificateApproved, api.CertificateDenied, api.CertificateFailed} {
		if len(findCSRConditions(csr, t)) < len(findCSRConditions(old, t)) {
			errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !opts.allowSettingApprovalConditions {
		for _, t := range []api.RequestConditionType{api.CertificateApproved, api.CertificateDenied} {
			oldC, newC := findCSRConditions(old, t), findCSRConditions(csr, t)
			switch {
			case len(newC) < len(oldC):
				// Reported above.
			case len(newC) > len(oldC):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !semanticEqual(oldC, newC):
				errs = append(errs, field.Forbidden(conditions, fmt.Sprintf("updates may not modify a condition of type %q\n%s", t, specDiff(conditions, oldC, newC))))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		switch {
		case !opts.allowSettingCertificate:
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not set certificate content"))
		case len(old.Status.Certificate) > 0:
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
		}
	}
	return append(errs, ValidateObjectMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
}

func findCSRConditions(csr *api.CertificateSigningRequest, t api.RequestConditionType) []api.CertificateSigningRequestCondition {
	var out []api.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// csrOptionsFor tolerates, on update, the problems the stored object
// already has, as Kubernetes does.
func csrOptionsFor(csr, old *api.CertificateSigningRequest) csrOptions {
	if old == nil {
		return csrOptions{}
	}
	o := csrOptions{allowLegacySignerName: old.Spec.SignerName == api.LegacyUnknownSignerName}
	seen := map[api.RequestConditionType]bool{}
	approved, denied := false, false
	for _, c := range old.Status.Conditions {
		if seen[c.Type] {
			o.allowDuplicateConditionTypes = true
		}
		seen[c.Type] = true
		if c.Type == "" {
			o.allowEmptyConditionType = true
		}
		approved = approved || c.Type == api.CertificateApproved
		denied = denied || c.Type == api.CertificateDenied
	}
	o.allowBothApprovedAndDenied = approved && denied
	o.allowArbitraryCertificate = bytes.Equal(csr.Status.Certificate, old.Status.Certificate) ||
		validateCertificatePEM(old.Status.Certificate) != nil
	usages := map[api.KeyUsage]bool{}
	for _, u := range old.Spec.Usages {
		if !slices.Contains(validUsages, string(u)) {
			o.allowUnknownUsages = true
		}
		if usages[u] {
			o.allowDuplicateUsages = true
		}
		usages[u] = true
	}
	return o
}

// validateCertificatePEM accepts an empty certificate or one or more PEM
// CERTIFICATE blocks without headers, each holding certificates.
func validateCertificatePEM(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// ValidateSignerName checks a signer name: "domain/path" where the domain
// has at least two DNS labels and each dot-separated part of the path is a
// DNS subdomain, 571 characters at most.
func ValidateSignerName(p *field.Path, signerName string) field.ErrorList {
	if signerName == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	segments := strings.Split(signerName, "/")
	if len(segments) != 2 {
		return field.ErrorList{field.Invalid(p, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	const maxDomain, maxLabel = 253, 63
	var errs field.ErrorList
	if len(segments[0]) > maxDomain {
		errs = append(errs, field.TooLong(p, "", maxDomain))
	}
	domainLabels := strings.Split(segments[0], ".")
	for _, l := range domainLabels {
		if msgs := naming.IsDNS1123Label(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, segments[0], fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	if len(domainLabels) < 2 {
		errs = append(errs, field.Invalid(p, segments[0], "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(segments[1], ".") {
		if msgs := naming.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, m := range msgs {
				errs = append(errs, field.Invalid(p, segments[1], fmt.Sprintf("validating label %q: %s", l, m)))
			}
			break
		}
	}
	if max := maxDomain + (maxDomain + maxLabel + 1) + 1; len(signerName) > max {
		errs = append(errs, field.TooLong(p, "", max))
	}
	return errs
}
