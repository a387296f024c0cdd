package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Validity defaults, kubeadm's: ten years for the CA, one year for what it
// issues.
const (
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultCertValidity = 365 * 24 * time.Hour
)

// backdate is how far before "now" a new certificate becomes valid, so a
// peer whose clock is a little behind ours accepts it right away (the
// Kubernetes CSR signer uses the same five minutes).
const backdate = 5 * time.Minute

// CA is a certificate authority: its certificate and the key that signs.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA creates a self-signed CA whose subject is CN=commonName. validity
// <= 0 means DefaultCAValidity.
func NewCA(commonName string, validity time.Duration) (*CA, error) {
	if commonName == "" {
		return nil, errors.New("new CA: common name is required")
	}
	if validity <= 0 {
		validity = DefaultCAValidity
	}
	key, err := NewPrivateKey()
	if err != nil {
		return nil, fmt.Errorf("new CA: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, fmt.Errorf("new CA: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("new CA: create certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("new CA: %w", err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// LoadCA reads a CA from PEM files and checks that the key matches the
// certificate and that the certificate is a CA allowed to sign certificates.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("load CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("load CA: %w", err)
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load CA from %s and %s: %w", certFile, keyFile, err)
	}
	return ca, nil
}

// ParseCA is LoadCA on PEM bytes.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := ParseCertPEM(certPEM)
	if err != nil {
		return nil, err
	}
	key, err := ParseKeyPEM(keyPEM)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("certificate %q is not a CA allowed to sign certificates", cert.Subject.CommonName)
	}
	if !publicKeysEqual(cert.PublicKey, key) {
		return nil, errors.New("private key does not match the CA certificate")
	}
	return &CA{Cert: cert, Key: key}, nil
}

// CertPEM returns the CA certificate in PEM, what clients trust.
func (ca *CA) CertPEM() []byte { return EncodeCertPEM(ca.Cert) }

// Pool returns a pool holding only this CA, for tls.Config.RootCAs or
// ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Hash is CAHash of this CA's certificate.
func (ca *CA) Hash() string { return hashCert(ca.Cert) }

// WriteFiles writes ca.crt (0644) and ca.key (0600) into dir, creating dir
// (0700) if needed. Each file is replaced atomically.
func (ca *CA) WriteFiles(dir string) error {
	keyPEM, err := EncodeKeyPEM(ca.Key)
	if err != nil {
		return fmt.Errorf("write CA: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write CA: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, CACertFile), ca.CertPEM(), 0o644); err != nil {
		return fmt.Errorf("write CA: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, CAKeyFile), keyPEM, 0o600); err != nil {
		return fmt.Errorf("write CA: %w", err)
	}
	return nil
}

// IssueServing issues a TLS server certificate (ExtKeyUsageServerAuth) for
// the given names with a fresh key. validity <= 0 means DefaultCertValidity;
// it never outlives the CA.
func (ca *CA) IssueServing(cn string, dnsNames []string, ips []net.IP, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	return ca.issueServing(cn, dnsNames, ips, validity, x509.ExtKeyUsageServerAuth)
}

// IssuePeer is IssueServing for a certificate that serves and also
// authenticates its holder as a client (ExtKeyUsageServerAuth and
// ExtKeyUsageClientAuth): what etcd members present to each other, and
// kubeadm's etcd server certificate.
func (ca *CA) IssuePeer(cn string, dnsNames []string, ips []net.IP, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	return ca.issueServing(cn, dnsNames, ips, validity, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issueServing(cn string, dnsNames []string, ips []net.IP, validity time.Duration, usages ...x509.ExtKeyUsage) (certPEM, keyPEM []byte, err error) {
	if cn == "" {
		return nil, nil, errors.New("issue serving certificate: common name is required")
	}
	if len(dnsNames) == 0 && len(ips) == 0 {
		return nil, nil, errors.New("issue serving certificate: at least one DNS name or IP address is required")
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    slices.Clone(dnsNames),
		IPAddresses: slices.Clone(ips),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: usages,
	}
	certPEM, keyPEM, err = ca.issueWithNewKey(tmpl, validity)
	if err != nil {
		return nil, nil, fmt.Errorf("issue serving certificate %q: %w", cn, err)
	}
	return certPEM, keyPEM, nil
}

// IssueClient issues a client certificate (ExtKeyUsageClientAuth) that
// authenticates as user (the CN) in groups (one O each), with a fresh key.
func (ca *CA) IssueClient(user string, groups []string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if user == "" {
		return nil, nil, errors.New("issue client certificate: user name is required")
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: slices.Clone(groups)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	certPEM, keyPEM, err = ca.issueWithNewKey(tmpl, validity)
	if err != nil {
		return nil, nil, fmt.Errorf("issue client certificate for %q: %w", user, err)
	}
	return certPEM, keyPEM, nil
}

// SignCSR signs a PEM certificate request after checking its signature.
// The certificate carries the request's subject and subject alternative
// names and the given usages, in certificates.k8s.io/v1 vocabulary ("digital
// signature", "key encipherment", "client auth", "server auth", ...). It is
// never a CA: "cert sign" and "crl sign" are refused. Deciding whether the
// request deserves a certificate (approval) is the caller's job.
func (ca *CA) SignCSR(csrPEM []byte, usages []string, validity time.Duration) ([]byte, error) {
	csr, err := ParseCSRPEM(csrPEM)
	if err != nil {
		return nil, fmt.Errorf("sign CSR: %w", err)
	}
	ku, eku, err := KeyUsagesFromStrings(usages)
	if err != nil {
		return nil, fmt.Errorf("sign CSR: %w", err)
	}
	if ku&(x509.KeyUsageCertSign|x509.KeyUsageCRLSign) != 0 {
		return nil, errors.New("sign CSR: usages \"cert sign\" and \"crl sign\" are not allowed")
	}
	tmpl := &x509.Certificate{
		Subject:        csr.Subject,
		DNSNames:       csr.DNSNames,
		IPAddresses:    csr.IPAddresses,
		EmailAddresses: csr.EmailAddresses,
		URIs:           csr.URIs,
		KeyUsage:       ku,
		ExtKeyUsage:    eku,
	}
	der, err := ca.sign(tmpl, csr.PublicKey, validity)
	if err != nil {
		return nil, fmt.Errorf("sign CSR for %q: %w", csr.Subject.CommonName, err)
	}
	return pemCert(der), nil
}

func (ca *CA) issueWithNewKey(tmpl *x509.Certificate, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := NewPrivateKey()
	if err != nil {
		return nil, nil, err
	}
	der, err := ca.sign(tmpl, key.Public(), validity)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = EncodeKeyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pemCert(der), keyPEM, nil
}

// sign fills in serial, validity window and constraints, then signs. The
// certificate ends when the CA does at the latest: a chain cannot be valid
// beyond its root anyway, and saying so keeps expiry reporting honest.
func (ca *CA) sign(tmpl *x509.Certificate, pub crypto.PublicKey, validity time.Duration) ([]byte, error) {
	if validity <= 0 {
		validity = DefaultCertValidity
	}
	now := time.Now()
	if !now.Before(ca.Cert.NotAfter) {
		return nil, fmt.Errorf("CA %q expired at %s", ca.Cert.Subject.CommonName, ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-backdate)
	tmpl.NotAfter = now.Add(validity)
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	tmpl.BasicConstraintsValid = true
	tmpl.IsCA = false
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("create certificate: %w", err)
	}
	return der, nil
}

// newSerial returns a random 128-bit positive serial number (RFC 5280 allows
// up to 20 octets; randomness keeps serials unique without state).
func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: CertificateBlockType, Bytes: der})
}

// ReadCAPool reads a PEM bundle of CA certificates from path into a pool
// (a --client-ca-file, --kubelet-certificate-authority and the like).
func ReadCAPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate found", path)
	}
	return pool, nil
}
