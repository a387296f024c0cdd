package authn

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/minik8s/minik8s/apiserver/request"
)

// X509 authenticates TLS client certificates issued by a CA in its pool for
// client authentication. The user is the certificate's CN, the groups its O
// values plus system:authenticated.
//
// It verifies the chain itself instead of trusting the TLS layer, so it is
// safe behind a listener that only requests certificates
// (tls.RequestClientCert) and it keeps working if the pool is narrower than
// the listener's ClientCAs.
type X509 struct {
	pool *x509.CertPool
	now  func() time.Time
}

var _ Authenticator = (*X509)(nil)

// NewX509 returns an authenticator for certificates signed by caPool.
func NewX509(caPool *x509.CertPool) *X509 {
	return &X509{pool: caPool, now: time.Now}
}

// AuthenticateRequest implements Authenticator. A request without a client
// certificate is not ok without error; a certificate that does not verify
// is an error; a verified certificate without CN is not ok without error
// (kube-apiserver's CommonNameUserConversion).
func (a *X509) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := r.TLS.PeerCertificates[0]
	opts := x509.VerifyOptions{
		Roots:       a.pool,
		CurrentTime: a.now(),
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(r.TLS.PeerCertificates) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	if _, err := leaf.Verify(opts); err != nil {
		return nil, false, fmt.Errorf("verifying certificate %s failed: %w", certificateIdentifier(leaf), err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, false, nil
	}
	return withAuthenticated(&request.User{
		Name:   leaf.Subject.CommonName,
		Groups: slices.Clone(leaf.Subject.Organization),
	}), true, nil
}

// certificateIdentifier names a certificate in logs without its key.
func certificateIdentifier(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%s, CN=%q, O=%q, issuer=%q", c.SerialNumber, c.Subject.CommonName, c.Subject.Organization, c.Issuer.CommonName)
}
