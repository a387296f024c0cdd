package pki

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Identities of the cluster's own components, as kube-apiserver's
// authorizers and default RBAC expect them.
const (
	AdminUser             = "kubernetes-admin"
	MastersGroup          = "system:masters"
	SchedulerUser         = "system:kube-scheduler"
	ControllerManagerUser = "system:kube-controller-manager"
	// NodeUserPrefix + node name is a kubelet's user; NodesGroup its group.
	NodeUserPrefix = "system:node:"
	NodesGroup     = "system:nodes"
)

// Usages of certificates.k8s.io/v1 CertificateSigningRequest spec.usages
// that a kubelet asks for.
const (
	UsageDigitalSignature = "digital signature"
	UsageKeyEncipherment  = "key encipherment"
	UsageClientAuth       = "client auth"
	UsageServerAuth       = "server auth"
)

// KubeletClientUsages are the usages of a kubelet's client CSR with an
// ECDSA key (an RSA key also needs "key encipherment").
var KubeletClientUsages = []string{UsageDigitalSignature, UsageClientAuth}

// The certificates.k8s.io/v1 usage vocabulary mapped to x509, as the
// Kubernetes signer maps it.
var (
	keyUsages = map[string]x509.KeyUsage{
		"signing":            x509.KeyUsageDigitalSignature,
		"digital signature":  x509.KeyUsageDigitalSignature,
		"content commitment": x509.KeyUsageContentCommitment,
		"key encipherment":   x509.KeyUsageKeyEncipherment,
		"key agreement":      x509.KeyUsageKeyAgreement,
		"data encipherment":  x509.KeyUsageDataEncipherment,
		"cert sign":          x509.KeyUsageCertSign,
		"crl sign":           x509.KeyUsageCRLSign,
		"encipher only":      x509.KeyUsageEncipherOnly,
		"decipher only":      x509.KeyUsageDecipherOnly,
	}
	extKeyUsages = map[string]x509.ExtKeyUsage{
		"any":              x509.ExtKeyUsageAny,
		"server auth":      x509.ExtKeyUsageServerAuth,
		"client auth":      x509.ExtKeyUsageClientAuth,
		"code signing":     x509.ExtKeyUsageCodeSigning,
		"email protection": x509.ExtKeyUsageEmailProtection,
		"s/mime":           x509.ExtKeyUsageEmailProtection,
		"ipsec end system": x509.ExtKeyUsageIPSECEndSystem,
		"ipsec tunnel":     x509.ExtKeyUsageIPSECTunnel,
		"ipsec user":       x509.ExtKeyUsageIPSECUser,
		"timestamping":     x509.ExtKeyUsageTimeStamping,
		"ocsp signing":     x509.ExtKeyUsageOCSPSigning,
		"microsoft sgc":    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
		"netscape sgc":     x509.ExtKeyUsageNetscapeServerGatedCrypto,
	}
)

// KeyUsagesFromStrings maps certificates.k8s.io/v1 usages to x509 key
// usages and extended key usages. An empty list or an unknown usage is an
// error.
func KeyUsagesFromStrings(usages []string) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	if len(usages) == 0 {
		return 0, nil, errors.New("at least one usage is required")
	}
	var ku x509.KeyUsage
	var eku []x509.ExtKeyUsage
	var unknown []string
	for _, u := range usages {
		if k, ok := keyUsages[u]; ok {
			ku |= k
		} else if e, ok := extKeyUsages[u]; ok {
			if !slices.Contains(eku, e) {
				eku = append(eku, e)
			}
		} else {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unknown)
	}
	return ku, eku, nil
}

// NewCSR generates a key and a PEM certificate request for CN=user,
// O=groups, as a kubelet does for CN=system:node:NAME, O=system:nodes.
func NewCSR(user string, groups []string) (csrPEM, keyPEM []byte, err error) {
	if user == "" {
		return nil, nil, errors.New("new CSR: user name is required")
	}
	key, err := NewPrivateKey()
	if err != nil {
		return nil, nil, fmt.Errorf("new CSR: %w", err)
	}
	tmpl := &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: user, Organization: slices.Clone(groups)},
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, nil, fmt.Errorf("new CSR: %w", err)
	}
	keyPEM, err = EncodeKeyPEM(key)
	if err != nil {
		return nil, nil, fmt.Errorf("new CSR: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: CertificateRequestBlockType, Bytes: der}), keyPEM, nil
}

// NodeUser is the user name of node's kubelet, "system:node:NAME".
func NodeUser(node string) string { return NodeUserPrefix + node }

// NodeNameFromUser returns NAME for "system:node:NAME".
func NodeNameFromUser(user string) (string, bool) {
	name, ok := strings.CutPrefix(user, NodeUserPrefix)
	if !ok || name == "" {
		return "", false
	}
	return name, true
}
