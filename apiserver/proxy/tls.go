package proxy

import "crypto/tls"

// newInsecureTLS is the TLS of the pod and service proxy: pods serve
// certificates for names the apiserver does not dial, so none is
// verified, as kube-apiserver's proxy transport does.
func newInsecureTLS() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // as kube-apiserver's proxy transport
		NextProtos:         []string{"http/1.1"},
	}
}
