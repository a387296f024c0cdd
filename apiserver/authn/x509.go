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
//
// A chain that verified is remembered (verifyCache): the same chain against
// the same pool is not verified again until the earliest NotAfter of the
// verified chain or two minutes, whichever is first. kube-apiserver verifies
// on every request; the answers are the same, the CPU is not.
type X509 struct {
	pool *x509.CertPool
	now  func() time.Time
	// cache remembers successful verifications; the zero value is ready.
	cache verifyCache
	// verify is x509.Certificate.Verify; tests count calls through it.
	verify func(leaf *x509.Certificate, opts x509.VerifyOptions) ([][]*x509.Certificate, error)
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
	if err := a.verifyChain(r.TLS.PeerCertificates); err != nil {
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

// verifyChain verifies the presented chain (leaf first) for client
// authentication against the pool at a.now(), unless the same chain
// verified against the same pool recently enough (verifyCache).
func (a *X509) verifyChain(presented []*x509.Certificate) error {
	now := a.now()
	key := verifyKey{chain: chainDigest(presented), roots: a.pool}
	if a.cache.verified(key, now) {
		return nil
	}
	opts := x509.VerifyOptions{
		Roots:       a.pool,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(presented) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range presented[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	verify := a.verify
	if verify == nil {
		verify = (*x509.Certificate).Verify
	}
	chains, err := verify(presented[0], opts)
	if err != nil {
		return err
	}
	a.cache.add(key, now, chains)
	return nil
}

// certificateIdentifier names a certificate in logs without its key.
func certificateIdentifier(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%s, CN=%q, O=%q, issuer=%q", c.SerialNumber, c.Subject.CommonName, c.Subject.Organization, c.Issuer.CommonName)
}
