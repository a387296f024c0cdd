package validation

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// The shapes of the requests Kubernetes' own signers accept
// (k8s.io/kubernetes/pkg/apis/certificates helpers.go), with its messages:
// the csrapproving controller recognises a kubelet client request by them
// and the csrsigning controllers mark a request of another shape Failed
// instead of signing it.

var (
	errOrganizationNotSystemNodes = errors.New("subject organization is not system:nodes")
	errCommonNameNotSystemNode    = errors.New("subject common name does not begin with system:node:")
	errDNSOrIPSANRequired         = errors.New("DNS or IP subjectAltName is required")
	errDNSSANNotAllowed           = errors.New("DNS subjectAltNames are not allowed")
	errEmailSANNotAllowed         = errors.New("Email subjectAltNames are not allowed")
	errIPSANNotAllowed            = errors.New("IP subjectAltNames are not allowed")
	errURISANNotAllowed           = errors.New("URI subjectAltNames are not allowed")
)

var (
	kubeletServingUsages      = []api.KeyUsage{api.UsageDigitalSignature, api.UsageKeyEncipherment, api.UsageServerAuth}
	kubeletServingUsagesNoRSA = []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth}
	kubeletClientUsages       = []api.KeyUsage{api.UsageDigitalSignature, api.UsageKeyEncipherment, api.UsageClientAuth}
	kubeletClientUsagesNoRSA  = []api.KeyUsage{api.UsageDigitalSignature, api.UsageClientAuth}
)

// ValidateKubeletClientCSR is kube's: CN=system:node:NAME, O=system:nodes
// and nothing else, no subject alternative name of any kind, and the
// usages of a client certificate (digital signature and client auth, with
// or without key encipherment). A kubelet's client certificate is an
// identity, never a server's.
func ValidateKubeletClientCSR(req *x509.CertificateRequest, usages []api.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotSystemNodes
	}
	switch {
	case len(req.DNSNames) > 0:
		return errDNSSANNotAllowed
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.IPAddresses) > 0:
		return errIPSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotSystemNode
	}
	if !sameUsages(usages, kubeletClientUsages) && !sameUsages(usages, kubeletClientUsagesNoRSA) {
		return fmt.Errorf("usages did not match %v", sortedUsages(kubeletClientUsages))
	}
	return nil
}

// ValidateKubeletServingCSR is kube's: O=system:nodes, a DNS or IP subject
// alternative name, no email or URI one, the usages of a serving
// certificate and CN=system:node:NAME.
func ValidateKubeletServingCSR(req *x509.CertificateRequest, usages []api.KeyUsage) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errOrganizationNotSystemNodes
	}
	switch {
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return errDNSOrIPSANRequired
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	}
	if !sameUsages(usages, kubeletServingUsages) && !sameUsages(usages, kubeletServingUsagesNoRSA) {
		return fmt.Errorf("usages did not match %v", sortedUsages(kubeletServingUsages))
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errCommonNameNotSystemNode
	}
	return nil
}

// ValidateKubeAPIServerClientCSR is what kube's
// kubernetes.io/kube-apiserver-client signer checks: client auth, and
// otherwise only digital signature and key encipherment. The subject is
// free but for system:masters, which the CertificateSubjectRestriction
// admission plugin refuses when the request is created.
func ValidateKubeAPIServerClientCSR(req *x509.CertificateRequest, usages []api.KeyUsage) error {
	clientAuth := false
	for _, u := range usages {
		switch u {
		case api.UsageDigitalSignature, api.UsageKeyEncipherment:
		case api.UsageClientAuth:
			clientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !clientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", api.UsageClientAuth)
	}
	return nil
}

// sameUsages compares usages as sets, as kube's sets.String.Equal does.
func sameUsages(got, want []api.KeyUsage) bool {
	set := map[api.KeyUsage]bool{}
	for _, u := range got {
		set[u] = true
	}
	if len(set) != len(want) {
		return false
	}
	for _, u := range want {
		if !set[u] {
			return false
		}
	}
	return true
}

// sortedUsages is sets.String.List(): the usages sorted, for messages.
func sortedUsages(usages []api.KeyUsage) []string {
	out := make([]string, len(usages))
	for i, u := range usages {
		out[i] = string(u)
	}
	slices.Sort(out)
	return out
}
