package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-jose/go-jose/v4"

	"github.com/minik8s/minik8s/internal/pki"
)

// Files of the generated key pair in the certificate directory (kubeadm's
// names).
const (
	KeyFile    = "sa.key"
	PubKeyFile = "sa.pub"
)

// PublicKey is a verification key and its key ID.
type PublicKey struct {
	KeyID string
	Key   crypto.PublicKey
}

// Keys are the signing key and every key tokens are verified with.
type Keys struct {
	signer  crypto.Signer
	signKID string
	alg     jose.SignatureAlgorithm
	public  []PublicKey
}

// KeyID is Kubernetes' key ID of a public key: the unpadded base64url of
// the SHA-256 of its PKIX DER encoding.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("failed to serialize public key to DER format: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

func algorithm(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", errors.New("unknown private key curve, must be 256, 384, or 521")
	}
	return "", fmt.Errorf("unsupported key type %T: must be RSA or ECDSA", pub)
}

// NewKeys returns keys signing with signer and verifying with its public
// key and extra.
func NewKeys(signer crypto.Signer, extra ...crypto.PublicKey) (*Keys, error) {
	alg, err := algorithm(signer.Public())
	if err != nil {
		return nil, err
	}
	k := &Keys{signer: signer, alg: alg}
	for _, pub := range append([]crypto.PublicKey{signer.Public()}, extra...) {
		if _, err := algorithm(pub); err != nil {
			return nil, err
		}
		kid, err := KeyID(pub)
		if err != nil {
			return nil, err
		}
		if k.signKID == "" {
			k.signKID = kid
		}
		if !k.has(kid) {
			k.public = append(k.public, PublicKey{KeyID: kid, Key: pub})
		}
	}
	return k, nil
}

func (k *Keys) has(kid string) bool {
	for _, p := range k.public {
		if p.KeyID == kid {
			return true
		}
	}
	return false
}

// PublicKeys returns the verification keys, the signing key's first.
func (k *Keys) PublicKeys() []PublicKey { return append([]PublicKey(nil), k.public...) }

// LoadKeys reads --service-account-signing-key-file (a private key) and the
// --service-account-key-file files (each: public keys, certificates or
// private keys, any number of PEM blocks).
func LoadKeys(signingKeyFile string, keyFiles []string) (*Keys, error) {
	data, err := os.ReadFile(signingKeyFile)
	if err != nil {
		return nil, err
	}
	signer, err := pki.ParseKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", signingKeyFile, err)
	}
	var extra []crypto.PublicKey
	for _, f := range keyFiles {
		pubs, err := ReadPublicKeys(f)
		if err != nil {
			return nil, err
		}
		extra = append(extra, pubs...)
	}
	return NewKeys(signer, extra...)
}

// ReadPublicKeys reads every public key of a PEM file, as kube-apiserver's
// keyutil.PublicKeysFromFile: PUBLIC KEY, RSA PUBLIC KEY, CERTIFICATE and
// the private key blocks (their public half).
func ReadPublicKeys(file string) ([]crypto.PublicKey, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var keys []crypto.PublicKey
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		var pub crypto.PublicKey
		switch b.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(b.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(b.Bytes)
		case "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(b.Bytes); err == nil {
				pub = c.PublicKey
			}
		case pki.ECPrivateKeyBlockType, pki.RSAPrivateKeyBlockType, pki.PrivateKeyBlockType:
			var s crypto.Signer
			if s, err = pki.ParseKeyPEM(pem.EncodeToMemory(b)); err == nil {
				pub = s.Public()
			}
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		keys = append(keys, pub)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("data does not contain any valid RSA or ECDSA public keys: %s", file)
	}
	return keys, nil
}

// EnsureKeys returns the key pair of dir (sa.key, sa.pub), creating an RSA
// 2048 pair on first start, as kubeadm does; later starts reuse it, so
// tokens stay valid across restarts.
func EnsureKeys(dir string) (*Keys, error) {
	keyPath := filepath.Join(dir, KeyFile)
	if data, err := os.ReadFile(keyPath); err == nil {
		signer, err := pki.ParseKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyPath, err)
		}
		return NewKeys(signer)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate service account key: %w", err)
	}
	keyPEM, err := pki.EncodeKeyPEM(key)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, PubKeyFile), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	// The private key last: its presence means the pair is complete.
	tmp := keyPath + ".tmp"
	if err := os.WriteFile(tmp, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, keyPath); err != nil {
		return nil, err
	}
	return NewKeys(key)
}
