package pki

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// hashFormatSHA256 is the only pin format kubeadm knows.
const hashFormatSHA256 = "sha256"

// CAHash returns the public-key pin of the first certificate in caCertPEM in
// kubeadm's --discovery-token-ca-cert-hash format:
// "sha256:" + lower-case hex of SHA-256 over the DER SubjectPublicKeyInfo.
// Pinning the key rather than the certificate survives re-issuing the CA
// certificate with the same key.
func CAHash(caCertPEM []byte) (string, error) {
	cert, err := ParseCertPEM(caCertPEM)
	if err != nil {
		return "", fmt.Errorf("CA hash: %w", err)
	}
	return hashCert(cert), nil
}

func hashCert(c *x509.Certificate) string { return hashFormatSHA256 + ":" + pinHex(c) }

func pinHex(c *x509.Certificate) string {
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return hex.EncodeToString(sum[:])
}

// parsePin validates a pin as kubeadm does ("format:hex", format sha256,
// exactly 32 bytes of hex, any case) and returns its lower-case hex.
func parsePin(pin string) (string, error) {
	format, value, ok := strings.Cut(pin, ":")
	if !ok || strings.Contains(value, ":") {
		return "", fmt.Errorf("invalid hash %q, expected \"format:hex-value\"; known format(s) are: %s", pin, hashFormatSHA256)
	}
	if !strings.EqualFold(format, hashFormatSHA256) {
		return "", fmt.Errorf("unknown hash format %q; known format(s) are: %s", format, hashFormatSHA256)
	}
	if n := hex.DecodedLen(len(value)); n != sha256.Size {
		return "", fmt.Errorf("invalid hash %q, expected a %d byte SHA-256 hash, found %d bytes", pin, sha256.Size, n)
	}
	if _, err := hex.DecodeString(value); err != nil {
		return "", fmt.Errorf("invalid hash %q, could not decode SHA-256 from hex: %w", pin, err)
	}
	return strings.ToLower(value), nil
}

// ValidateCAHash checks the format of a --discovery-token-ca-cert-hash
// ("sha256:" and 64 hex digits) without a CA to compare it with.
func ValidateCAHash(hash string) error {
	_, err := parsePin(hash)
	return err
}

// VerifyCAHash checks that some certificate in caPEM (a bundle may hold
// several) has the public key pinned by hash, kubeadm's discovery rule. A
// malformed hash is an error of its own, so a typo is not reported as a
// mismatch.
func VerifyCAHash(caPEM []byte, hash string) error {
	want, err := parsePin(hash)
	if err != nil {
		return err
	}
	certs, err := ParseCertsPEM(caPEM)
	if err != nil {
		return fmt.Errorf("verify CA hash: %w", err)
	}
	return checkPinned(certs, want)
}

func checkPinned(certs []*x509.Certificate, wantHex string) error {
	var seen []string
	for _, c := range certs {
		if pinHex(c) == wantHex {
			return nil
		}
		seen = append(seen, hashCert(c))
	}
	return fmt.Errorf("none of the public keys %q are pinned", strings.Join(seen, ","))
}

// FetchPinnedCA learns the cluster CA from the apiserver itself, trusting it
// only through the pin: it completes a TLS handshake with server ("https://
// host:port" or "host:port") and accepts the connection only if the chain the
// server presents holds a CA certificate whose public key matches caHash and
// the serving certificate verifies against that CA for the dialed host. It
// returns that CA certificate in PEM, to be written as the kubelet's
// ca.crt. The server must send its CA in the chain (Bundle.ServerTLSConfig
// does).
//
// Go's normal verification is turned off here only to be replaced by this
// stricter one: a man in the middle cannot present a chain ending in a key
// with the pinned hash without holding the CA's private key.
func FetchPinnedCA(ctx context.Context, server, caHash string) ([]byte, error) {
	want, err := parsePin(caHash)
	if err != nil {
		return nil, err
	}
	hostport, host, err := splitServer(server)
	if err != nil {
		return nil, fmt.Errorf("fetch CA: %w", err)
	}
	var found *x509.Certificate
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         host,
		InsecureSkipVerify: true, // replaced by VerifyConnection below, see above
		VerifyConnection: func(cs tls.ConnectionState) error {
			ca, err := verifyPinnedChain(cs.PeerCertificates, host, want)
			if err != nil {
				return err
			}
			found = ca
			return nil
		},
	}
	d := &tls.Dialer{Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("fetch CA from %s: %w", hostport, err)
	}
	_ = conn.Close()
	return EncodeCertPEM(found), nil
}

// verifyPinnedChain finds the pinned CA in a presented chain and verifies the
// leaf against it for host.
func verifyPinnedChain(chain []*x509.Certificate, host, wantHex string) (*x509.Certificate, error) {
	if len(chain) == 0 {
		return nil, errors.New("server presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	var seen []string
	for _, ca := range chain[1:] {
		if !ca.IsCA {
			continue
		}
		if pinHex(ca) != wantHex {
			seen = append(seen, hashCert(ca))
			continue
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		if _, err := chain[0].Verify(x509.VerifyOptions{
			DNSName:       host,
			Roots:         roots,
			Intermediates: inter,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}); err != nil {
			return nil, fmt.Errorf("serving certificate does not verify against the pinned CA: %w", err)
		}
		return ca, nil
	}
	if len(seen) == 0 {
		return nil, errors.New("server did not present its CA certificate, cannot check the CA hash")
	}
	return nil, fmt.Errorf("none of the public keys %q are pinned", strings.Join(seen, ","))
}

// splitServer turns "https://host:port", "host:port" or "host" into a dial
// address (default port 6443) and the host to verify.
func splitServer(server string) (hostport, host string, err error) {
	if strings.Contains(server, "://") {
		u, err := url.Parse(server)
		if err != nil {
			return "", "", err
		}
		if u.Scheme != "https" {
			return "", "", fmt.Errorf("server %q: scheme must be https", server)
		}
		server = u.Host
	}
	if server == "" {
		return "", "", errors.New("server address is empty")
	}
	h, p, err := net.SplitHostPort(server)
	if err != nil {
		// no port
		h, p = strings.Trim(server, "[]"), "6443"
	}
	return net.JoinHostPort(h, p), h, nil
}
