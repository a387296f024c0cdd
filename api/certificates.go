package api

// CertificatesGroupName is the API group of CertificateSigningRequest.
const CertificatesGroupName = "certificates.k8s.io"

// Signer names Kubernetes reserves (spec.signerName).
const (
	// KubeAPIServerClientSignerName issues client certificates for the apiserver.
	KubeAPIServerClientSignerName = "kubernetes.io/kube-apiserver-client"
	// KubeAPIServerClientKubeletSignerName issues the client certificates
	// kubelets authenticate with (CN system:node:NAME, O system:nodes).
	KubeAPIServerClientKubeletSignerName = "kubernetes.io/kube-apiserver-client-kubelet"
	// KubeletServingSignerName issues kubelets' serving certificates.
	KubeletServingSignerName = "kubernetes.io/kubelet-serving"
	// LegacyUnknownSignerName is refused by certificates.k8s.io/v1.
	LegacyUnknownSignerName = "kubernetes.io/legacy-unknown"
)

// CertificateSigningRequest (certificates.k8s.io/v1) asks a signer for a
// certificate. It is cluster-scoped; approval (status.conditions Approved or
// Denied) goes through the approval subresource, the issued certificate
// through the status subresource.
type CertificateSigningRequest struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       CertificateSigningRequestSpec   `json:"spec"`
	Status     CertificateSigningRequestStatus `json:"status,omitzero"`
}

// CertificateSigningRequestList is a list of CertificateSigningRequests.
type CertificateSigningRequestList = List[CertificateSigningRequest]

// CertificateSigningRequestSpec is the request. Username, UID, Groups and
// Extra are the requester's identity, which the apiserver sets on create
// from the authenticated user; clients cannot choose them.
type CertificateSigningRequestSpec struct {
	// Request is a PEM-encoded PKCS#10 "CERTIFICATE REQUEST" (base64 in JSON).
	Request    []byte `json:"request"`
	SignerName string `json:"signerName"`
	// ExpirationSeconds is the requested validity, at least 600.
	ExpirationSeconds *int32                `json:"expirationSeconds,omitempty"`
	Usages            []KeyUsage            `json:"usages,omitempty"`
	Username          string                `json:"username,omitempty"`
	UID               string                `json:"uid,omitempty"`
	Groups            []string              `json:"groups,omitempty"`
	Extra             map[string]ExtraValue `json:"extra,omitempty"`
}

// ExtraValue is one value list of the requester's extra attributes.
type ExtraValue []string

// CertificateSigningRequestStatus holds the approval conditions and the
// issued certificate.
type CertificateSigningRequestStatus struct {
	Conditions []CertificateSigningRequestCondition `json:"conditions,omitempty"`
	// Certificate is the issued PEM certificate chain (base64 in JSON).
	Certificate []byte `json:"certificate,omitempty"`
}

// RequestConditionType is the type of a CSR condition.
type RequestConditionType string

// CSR condition types. Approved and Denied exclude each other; a Failed
// condition means the signer gave up.
const (
	CertificateApproved RequestConditionType = "Approved"
	CertificateDenied   RequestConditionType = "Denied"
	CertificateFailed   RequestConditionType = "Failed"
)

// CertificateSigningRequestCondition is one condition of a CSR.
type CertificateSigningRequestCondition struct {
	Type               RequestConditionType `json:"type"`
	Status             ConditionStatus      `json:"status"`
	Reason             string               `json:"reason,omitempty"`
	Message            string               `json:"message,omitempty"`
	LastUpdateTime     Time                 `json:"lastUpdateTime,omitzero"`
	LastTransitionTime Time                 `json:"lastTransitionTime,omitzero"`
}

// KeyUsage is a requested use of the certificate's key (RFC 5280).
type KeyUsage string

// Key usages, spelt as Kubernetes spells them.
const (
	UsageSigning           KeyUsage = "signing"
	UsageDigitalSignature  KeyUsage = "digital signature"
	UsageContentCommitment KeyUsage = "content commitment"
	UsageKeyEncipherment   KeyUsage = "key encipherment"
	UsageKeyAgreement      KeyUsage = "key agreement"
	UsageDataEncipherment  KeyUsage = "data encipherment"
	UsageCertSign          KeyUsage = "cert sign"
	UsageCRLSign           KeyUsage = "crl sign"
	UsageEncipherOnly      KeyUsage = "encipher only"
	UsageDecipherOnly      KeyUsage = "decipher only"
	UsageAny               KeyUsage = "any"
	UsageServerAuth        KeyUsage = "server auth"
	UsageClientAuth        KeyUsage = "client auth"
	UsageCodeSigning       KeyUsage = "code signing"
	UsageEmailProtection   KeyUsage = "email protection"
	UsageSMIME             KeyUsage = "s/mime"
	UsageIPsecEndSystem    KeyUsage = "ipsec end system"
	UsageIPsecTunnel       KeyUsage = "ipsec tunnel"
	UsageIPsecUser         KeyUsage = "ipsec user"
	UsageTimestamping      KeyUsage = "timestamping"
	UsageOCSPSigning       KeyUsage = "ocsp signing"
	UsageMicrosoftSGC      KeyUsage = "microsoft sgc"
	UsageNetscapeSGC       KeyUsage = "netscape sgc"
)
