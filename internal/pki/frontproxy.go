package pki

import (
	"fmt"
	"os"
	"time"
)

// Files and user of the front-proxy PKI, kubeadm's: the CA extension
// apiservers trust for request-header authentication, and the client
// certificate the apiserver's aggregator presents to them.
const (
	FrontProxyCACertFile   = "front-proxy-ca.crt"
	FrontProxyCAKeyFile    = "front-proxy-ca.key"
	FrontProxyClientName   = "front-proxy-client"
	FrontProxyClientUser   = "front-proxy-client"
	frontProxyCACommonName = "front-proxy-ca"
)

// EnsureFrontProxy makes certDir hold the front-proxy CA
// (front-proxy-ca.crt|key, created only when both are missing) and a
// front-proxy-client certificate it signed (re-issued as EnsureClientCert
// does). The returned Bundle's CA is the front-proxy CA.
func EnsureFrontProxy(certDir string) (b *Bundle, certPEM, keyPEM []byte, err error) {
	b = &Bundle{Dir: certDir}
	certPath, keyPath := b.Path(FrontProxyCACertFile), b.Path(FrontProxyCAKeyFile)
	certOK, err := exists(certPath)
	if err != nil {
		return nil, nil, nil, err
	}
	keyOK, err := exists(keyPath)
	if err != nil {
		return nil, nil, nil, err
	}
	switch {
	case certOK && keyOK:
		if b.CA, err = LoadCA(certPath, keyPath); err != nil {
			return nil, nil, nil, err
		}
		if !time.Now().Before(b.CA.Cert.NotAfter) {
			return nil, nil, nil, fmt.Errorf("front-proxy CA certificate %s expired", certPath)
		}
	case certOK != keyOK:
		return nil, nil, nil, fmt.Errorf("only one of %s and %s exists: provide both or neither", certPath, keyPath)
	default:
		if err := os.MkdirAll(certDir, 0o700); err != nil {
			return nil, nil, nil, err
		}
		if b.CA, err = NewCA(frontProxyCACommonName, DefaultCAValidity); err != nil {
			return nil, nil, nil, err
		}
		caKey, err := EncodeKeyPEM(b.CA.Key)
		if err != nil {
			return nil, nil, nil, err
		}
		if err := b.writePair(FrontProxyCACertFile, FrontProxyCAKeyFile, b.CA.CertPEM(), caKey, errMissing); err != nil {
			return nil, nil, nil, err
		}
	}
	certPEM, keyPEM, err = b.EnsureClientCert(FrontProxyClientName, FrontProxyClientUser, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	return b, certPEM, keyPEM, nil
}
