package validation

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/naming"
)

// PodCertificateRequest bounds, as kube's certificates API.
const (
	maxStubPKCS10RequestSize = 10 * 1024
	maxCertificateChainSize  = 100 * 1024
	maxPCRUIDLength          = 128
)

// The terminal conditions of a PodCertificateRequest.
var pcrConditionTypes = []string{"Issued", "Denied", "Failed"}

var (
	pkcs10ReqPath    = field.NewPath("spec", "stubPKCS10Request")
	certChainPath    = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

// ValidatePodCertificateRequest is kube's ValidatePodCertificateRequestCreate:
// the signer, the pod, service account and node with their UIDs, the
// lifetime bounds of the signer, and a stub PKCS#10 request of a supported
// key type signed by its key.
func ValidatePodCertificateRequest(req *api.PodCertificateRequest) field.ErrorList {
	errs := ValidateObjectMeta(&req.ObjectMeta, true, naming.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := &req.Spec
	sp := field.NewPath("spec")
	errs = append(errs, ValidateSignerName(sp.Child("signerName"), spec.SignerName)...)
	if spec.UnverifiedUserAnnotations != nil {
		errs = append(errs, validateUserAnnotations(spec.UnverifiedUserAnnotations, sp.Child("unverifiedUserAnnotations"))...)
	}
	for _, f := range []struct {
		name, value string
		uidName     string
		uid         api.UID
	}{
		{"podName", spec.PodName, "podUID", spec.PodUID},
		{"serviceAccountName", spec.ServiceAccountName, "serviceAccountUID", spec.ServiceAccountUID},
		{"nodeName", spec.NodeName, "nodeUID", spec.NodeUID},
	} {
		for _, msg := range naming.NameIsDNSSubdomain(f.value, false) {
			errs = append(errs, field.Invalid(sp.Child(f.name), f.value, msg))
		}
		if len(f.uid) == 0 {
			errs = append(errs, field.Invalid(sp.Child(f.uidName), string(f.uid), "must not be empty"))
		}
		if len(f.uid) > maxPCRUIDLength {
			errs = append(errs, field.TooLong(sp.Child(f.uidName), string(f.uid), maxPCRUIDLength))
		}
	}
	exp := spec.MaxExpirationSeconds
	if exp == nil {
		return append(errs, field.Required(sp.Child("maxExpirationSeconds"), "must be set"))
	}
	limit := maxMaxExpirationSeconds
	if isKubernetesSignerName(spec.SignerName) {
		limit = kubernetesMaxMaxExpirationSeconds
	}
	if *exp < minMaxExpirationSeconds || int(*exp) > limit {
		errs = append(errs, field.Invalid(sp.Child("maxExpirationSeconds"), exp, fmt.Sprintf("must be in the range [%d, %d]", minMaxExpirationSeconds, limit)))
	}
	if len(spec.StubPKCS10Request) == 0 {
		return append(errs, field.Invalid(sp, field.OmitValue, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	}
	return append(errs, validateStubPKCS10Request(spec.StubPKCS10Request)...)
}

func validateStubPKCS10Request(der []byte) field.ErrorList {
	if len(der) > maxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(pkcs10ReqPath, "", maxStubPKCS10RequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValue, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValue, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := req.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValue, "invalid signature")}
	}
	return nil
}

// ValidatePodCertificateRequestUpdate: only metadata changes; the spec is
// immutable (status changes go through /status).
func ValidatePodCertificateRequestUpdate(req, old *api.PodCertificateRequest) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&req.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateImmutable(req.Spec, old.Spec, field.NewPath("spec"))...)
}

// ValidatePodCertificateRequestStatusUpdate is kube's: at most one of the
// terminal conditions (True), and once one is set the status is frozen; a
// denial or failure carries conditions alone; an issuance carries a chain
// whose leaf certifies the requested key, its notBefore (within 5 minutes
// of now) and notAfter, a lifetime of 1 hour to spec.maxExpirationSeconds,
// and beginRefreshAt at least 10 minutes inside it.
func ValidatePodCertificateRequestStatusUpdate(req, old *api.PodCertificateRequest, now time.Time) field.ErrorList {
	if errs := ValidateObjectMetaUpdate(&req.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata")); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	cp := field.NewPath("status", "conditions")
	known := 0
	for i, c := range req.Status.Conditions {
		switch c.Type {
		case "Issued", "Denied", "Failed":
			known++
			if known > 1 {
				errs = append(errs, field.Invalid(cp.Child(fmt.Sprintf("[%d]", i)).Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != api.ConditionTrue {
				errs = append(errs, field.NotSupported(cp.Child(fmt.Sprintf("[%d]", i)).Child("status"), c.Status, []string{string(api.ConditionTrue)}))
			}
		default:
			errs = append(errs, field.NotSupported(cp.Child(fmt.Sprintf("[%d]", i)).Child("type"), c.Type, pcrConditionTypes))
		}
	}
	errs = append(errs, validateConditions(req.Status.Conditions, cp)...)
	if len(errs) > 0 {
		return errs
	}
	sp := field.NewPath("status")
	if pcrHas(old, "Issued") || pcrHas(old, "Denied") || pcrHas(old, "Failed") {
		if !semanticEqual(req.Status, old.Status) {
			return field.ErrorList{field.Invalid(sp, field.OmitValue, "immutable after PodCertificateRequest is issued, denied, or failed")}
		}
		return nil
	}
	if pcrHas(req, "Denied") || pcrHas(req, "Failed") {
		if !semanticEqual(req.Status, api.PodCertificateRequestStatus{Conditions: req.Status.Conditions}) {
			return field.ErrorList{field.Invalid(sp, field.OmitValue, "non-condition status fields must be empty when denying or failing the PodCertificateRequest")}
		}
		return nil
	}
	if !pcrHas(req, "Issued") {
		if !semanticEqual(req.Status, old.Status) {
			return field.ErrorList{field.Invalid(sp, field.OmitValue, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)}
		}
		return nil
	}
	return validateIssuedChain(req, old, now)
}

func validateIssuedChain(req, old *api.PodCertificateRequest, now time.Time) field.ErrorList {
	st := &req.Status
	chain := st.CertificateChain
	if len(chain) > maxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, "", maxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	if leafBlock == nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must contain at least one certificate")}
	}
	if leafBlock.Type != "CERTIFICATE" {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	var errs field.ErrorList
	for _, d := range leaf.DNSNames {
		if d == "" {
			errs = append(errs, field.Invalid(certChainPath, d, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(d, "..") {
			errs = append(errs, field.Invalid(certChainPath, d, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
			errs = append(errs, field.Invalid(certChainPath, d, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, e := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(e); err != nil {
			errs = append(errs, field.Invalid(certChainPath, e, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	stub, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return append(errs, field.Invalid(pkcs10ReqPath, field.OmitValue, "must be a valid PKCS#10 CSR"))
	}
	if want, ok := stub.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && !want.Equal(leaf.PublicKey) {
		return append(errs, field.Invalid(certChainPath, chain, "leaf certificate was not issued to the requested public key"))
	}
	if st.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) > 0 {
		return errs
	}
	notBefore, notAfter, refresh := st.NotBefore.Time, st.NotAfter.Time, st.BeginRefreshAt.Time
	switch lifetime := leaf.NotAfter.Sub(leaf.NotBefore); {
	case !notBefore.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(notBeforePath, goTime(notBefore), "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(notBefore.After(now.Add(-5*time.Minute)) && notBefore.Before(now.Add(5*time.Minute))):
		return field.ErrorList{field.Invalid(notBeforePath, goTime(notBefore), "must be set to within 5 minutes of kube-apiserver's current time")}
	case !notAfter.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(notAfterPath, goTime(notAfter), "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(certChainPath, int64(lifetime), "leaf certificate lifetime must be >= 1 hour")}
	case req.Spec.MaxExpirationSeconds != nil && lifetime > time.Duration(*req.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(certChainPath, int64(lifetime), fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *req.Spec.MaxExpirationSeconds))}
	case refresh.Before(notBefore.Add(10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, goTime(refresh), "must be at least 10 minutes after status.notBefore")}
	case refresh.After(notAfter.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, goTime(refresh), "must be at least 10 minutes before status.notAfter")}
	}
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return field.ErrorList{field.Invalid(certChainPath, chain, "intermediate certificate does not parse as valid X.509")}
		}
	}
}

// goTime renders a time in an error as kube-apiserver does: JSON.
type goTime time.Time

func (t goTime) String() string { return `"` + time.Time(t).Format(time.RFC3339Nano) + `"` }

func pcrHas(req *api.PodCertificateRequest, condition string) bool {
	for _, c := range req.Status.Conditions {
		if c.Type == condition && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

// conditionReason is metav1's condition reason format.
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// validateConditions is metav1's ValidateConditions: unique types, each a
// qualified name, a known status, a transition time, a reason of the
// CamelCase form and a bounded message.
func validateConditions(conds []api.Condition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range conds {
		ip := p.Index(i)
		if seen[c.Type] {
			errs = append(errs, field.Duplicate(ip, c.Type))
		}
		seen[c.Type] = true
		if c.Type == "" {
			errs = append(errs, field.Required(ip.Child("type"), "is required"))
		} else {
			errs = append(errs, ValidateLabelName(c.Type, ip.Child("type"))...)
		}
		switch c.Status {
		case "":
			errs = append(errs, field.Required(ip.Child("status"), ""))
		case api.ConditionTrue, api.ConditionFalse, api.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(ip.Child("status"), c.Status, []string{"False", "True", "Unknown"}))
		}
		if c.ObservedGeneration < 0 {
			errs = append(errs, field.Invalid(ip.Child("observedGeneration"), c.ObservedGeneration, "must be greater than or equal to zero"))
		}
		if c.LastTransitionTime.IsZero() {
			errs = append(errs, field.Required(ip.Child("lastTransitionTime"), ""))
		}
		if c.Reason == "" {
			errs = append(errs, field.Required(ip.Child("reason"), ""))
		} else {
			if !conditionReason.MatchString(c.Reason) {
				errs = append(errs, field.Invalid(ip.Child("reason"), c.Reason, "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"))
			}
			if len(c.Reason) > 1024 {
				errs = append(errs, field.TooLong(ip.Child("reason"), "", 1024))
			}
		}
		if len(c.Message) > 32*1024 {
			errs = append(errs, field.TooLong(ip.Child("message"), "", 32*1024))
		}
	}
	return errs
}
