package bootstrap

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
)

// Serving certificate files under <root-dir>/pki, the kubelet's names.
const (
	ServingCertFile = "kubelet.crt"
	ServingKeyFile  = "kubelet.key"
)

// renewBefore is how long before expiry a serving certificate is replaced.
const renewBefore = 30 * 24 * time.Hour

// EnsureServingCert returns the kubelet's serving certificate from
// RootDir/pki/kubelet.crt|key, making a self-signed one (a throwaway
// "HOST-ca@TIMESTAMP" CA and a certificate for the node's names it signs,
// as the kubelet does without serverTLSBootstrap) when the files are
// missing, expiring or do not cover hostname and ips.
func EnsureServingCert(rootDir, hostname string, ips []net.IP) (tls.Certificate, error) {
	dir := filepath.Join(rootDir, "pki")
	certPath, keyPath := filepath.Join(dir, ServingCertFile), filepath.Join(dir, ServingKeyFile)
	if c, err := tls.LoadX509KeyPair(certPath, keyPath); err == nil && covers(c, hostname, ips) {
		return c, nil
	}
	ca, err := pki.NewCA(fmt.Sprintf("%s-ca@%d", hostname, time.Now().Unix()), pki.DefaultCertValidity)
	if err != nil {
		return tls.Certificate{}, err
	}
	allIPs := slices.Clone(ips)
	certPEM, keyPEM, err := ca.IssueServing(hostname, []string{hostname}, allIPs, pki.DefaultCertValidity)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, err
	}
	chain := append(append([]byte{}, certPEM...), ca.CertPEM()...)
	if err := writeFileAtomic(keyPath, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	if err := writeFileAtomic(certPath, chain, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(chain, keyPEM)
}

func covers(c tls.Certificate, hostname string, ips []net.IP) bool {
	if len(c.Certificate) == 0 {
		return false
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < renewBefore {
		return false
	}
	if leaf.VerifyHostname(hostname) != nil {
		return false
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}
