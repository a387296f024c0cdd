package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// PEM block types, as written by kubeadm and read by client-go's keyutil.
const (
	CertificateBlockType        = "CERTIFICATE"
	CertificateRequestBlockType = "CERTIFICATE REQUEST"
	ECPrivateKeyBlockType       = "EC PRIVATE KEY"
	RSAPrivateKeyBlockType      = "RSA PRIVATE KEY"
	PrivateKeyBlockType         = "PRIVATE KEY" // PKCS #8
)

// NewPrivateKey generates the key type every certificate of this package
// uses (see the package documentation for why ECDSA P-256).
func NewPrivateKey() (crypto.Signer, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ECDSA P-256 key: %w", err)
	}
	return k, nil
}

// EncodeCertPEM returns cert as a CERTIFICATE block.
func EncodeCertPEM(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: CertificateBlockType, Bytes: cert.Raw})
}

// EncodeKeyPEM returns key as "EC PRIVATE KEY" (SEC 1) or "RSA PRIVATE KEY"
// (PKCS #1), the encodings kubeadm writes; other key types are refused.
func EncodeKeyPEM(key crypto.Signer) ([]byte, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, fmt.Errorf("marshal EC private key: %w", err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: ECPrivateKeyBlockType, Bytes: der}), nil
	case *rsa.PrivateKey:
		return pem.EncodeToMemory(&pem.Block{Type: RSAPrivateKeyBlockType, Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	default:
		return nil, fmt.Errorf("unsupported private key type %T", key)
	}
}

// ParseCertPEM returns the first certificate in data. Blocks of other types
// before it are skipped, so a file holding a key and a certificate works.
func ParseCertPEM(data []byte) (*x509.Certificate, error) {
	certs, err := ParseCertsPEM(data)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

// ParseCertsPEM returns every certificate in data, in order. It fails when
// data holds none or any CERTIFICATE block does not parse.
func ParseCertsPEM(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != CertificateBlockType {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no CERTIFICATE block found in PEM data")
	}
	return certs, nil
}

// ParseKeyPEM returns the first private key in data: SEC 1 EC, PKCS #1 RSA
// or PKCS #8 (EC, RSA or Ed25519).
func ParseKeyPEM(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no private key block found in PEM data")
		}
		switch b.Type {
		case ECPrivateKeyBlockType:
			k, err := x509.ParseECPrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse EC private key: %w", err)
			}
			return k, nil
		case RSAPrivateKeyBlockType:
			k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse RSA private key: %w", err)
			}
			return k, nil
		case PrivateKeyBlockType:
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("parse PKCS #8 private key: %w", err)
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("PKCS #8 key of type %T cannot sign", k)
			}
			return s, nil
		}
	}
}

// ParseCSRPEM returns the certificate request in data with its signature
// checked, so the requester is proven to hold the private key.
func ParseCSRPEM(data []byte) (*x509.CertificateRequest, error) {
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no CERTIFICATE REQUEST block found in PEM data")
		}
		if b.Type != CertificateRequestBlockType {
			continue
		}
		csr, err := x509.ParseCertificateRequest(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate request: %w", err)
		}
		if err := csr.CheckSignature(); err != nil {
			return nil, fmt.Errorf("certificate request signature: %w", err)
		}
		return csr, nil
	}
}

// publicKeysEqual reports whether a certificate's public key belongs to key.
func publicKeysEqual(pub crypto.PublicKey, key crypto.Signer) bool {
	eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(key.Public())
}
