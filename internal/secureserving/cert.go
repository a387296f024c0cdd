package secureserving

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
)

// selfSignedValidity is how long a generated serving certificate lasts
// (kube's GenerateSelfSignedCertKey: a year).
const selfSignedValidity = 365 * 24 * time.Hour

// servingCertificate is --tls-cert-file and --tls-private-key-file, else
// CertDir/PairName.crt and .key when both can be read, else a new
// self-signed pair (written there when CertDir is set), as kube's
// MaybeDefaultWithSelfSignedCerts does.
func (o *Options) servingCertificate(log *slog.Logger) (tls.Certificate, error) {
	if o.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSPrivateKeyFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("--tls-cert-file/--tls-private-key-file: %w", err)
		}
		return cert, nil
	}
	var certFile, keyFile string
	if o.CertDir != "" {
		certFile, keyFile = filepath.Join(o.CertDir, o.PairName+".crt"), filepath.Join(o.CertDir, o.PairName+".key")
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err == nil {
			return cert, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return tls.Certificate{}, fmt.Errorf("--cert-dir: %w", err)
		}
	}
	certPEM, keyPEM, err := o.selfSigned()
	if err != nil {
		return tls.Certificate{}, err
	}
	if o.CertDir != "" {
		if err := os.MkdirAll(o.CertDir, 0o755); err != nil {
			return tls.Certificate{}, fmt.Errorf("--cert-dir: %w", err)
		}
		if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
			return tls.Certificate{}, fmt.Errorf("--cert-dir: %w", err)
		}
		if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
			return tls.Certificate{}, fmt.Errorf("--cert-dir: %w", err)
		}
		log.Info("generated self-signed serving certificate", "cert", certFile, "key", keyFile)
	} else {
		log.Info("generated self-signed serving certificate in memory")
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// selfSigned makes a CA named "HOST-ca@UNIX" and a serving certificate
// "HOST@UNIX" it signs for localhost (or the bind address when it is a
// specific one) and 127.0.0.1; the certificate PEM holds both, leaf first.
func (o *Options) selfSigned() (certPEM, keyPEM []byte, err error) {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	now := time.Now().Unix()
	ca, err := pki.NewCA(fmt.Sprintf("%s-ca@%d", host, now), selfSignedValidity)
	if err != nil {
		return nil, nil, err
	}
	dns := []string{host}
	ips := []net.IP{net.IPv4(127, 0, 0, 1)}
	if ip := net.ParseIP(o.BindAddress); ip != nil && !ip.IsUnspecified() {
		ips = append(ips, ip)
	} else {
		dns = append(dns, "localhost")
	}
	leaf, key, err := ca.IssueServing(fmt.Sprintf("%s@%d", host, now), dns, ips, selfSignedValidity)
	if err != nil {
		return nil, nil, err
	}
	return append(leaf, ca.CertPEM()...), key, nil
}
