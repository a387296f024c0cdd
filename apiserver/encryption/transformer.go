package encryption

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"golang.org/x/crypto/nacl/secretbox"
)

// Transformer turns a stored value's plaintext into what is written to etcd
// and back. Implementations are safe for concurrent use.
type Transformer interface {
	// TransformToStorage returns the bytes to store for plain.
	TransformToStorage(plain, authenticatedData []byte) ([]byte, error)
	// TransformFromStorage returns the plaintext of a stored value.
	TransformFromStorage(stored, authenticatedData []byte) ([]byte, error)
}

// encryptedPrefix starts every value written by an encrypting provider.
const encryptedPrefix = "k8s:enc:"

// ErrNotEncrypted is returned when plaintext is read by a transformer that
// has no identity provider among its readers.
var ErrNotEncrypted = errors.New("the stored value is not encrypted and identity is not among the configured providers")

// ErrEncrypted is returned when an encrypted value is read by identity alone:
// a resource without encryption configured, or whose key was removed.
var ErrEncrypted = errors.New("identity transformer tried to read encrypted data")

// value is one key of one provider.
type value interface {
	seal(plain, ad []byte) ([]byte, error)
	open(sealed, ad []byte) ([]byte, error)
}

// prefixed is a value with its on-disk prefix and a name for errors.
type prefixed struct {
	prefix []byte
	name   string // `aescbc key "key1"`
	value  value
}

// chain is the Transformer of one resource: readers in configuration order,
// the first of which writes.
type chain struct {
	readers []prefixed
}

var _ Transformer = (*chain)(nil)

func (c *chain) TransformToStorage(plain, ad []byte) ([]byte, error) {
	w := c.readers[0]
	sealed, err := w.value.seal(plain, ad)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.name, err)
	}
	out := make([]byte, 0, len(w.prefix)+len(sealed))
	return append(append(out, w.prefix...), sealed...), nil
}

func (c *chain) TransformFromStorage(stored, ad []byte) ([]byte, error) {
	for _, r := range c.readers {
		if !bytes.HasPrefix(stored, r.prefix) {
			continue
		}
		out, err := r.value.open(stored[len(r.prefix):], ad)
		if err != nil {
			if len(r.prefix) == 0 {
				// identity listed before the encrypting providers (turning
				// encryption off) must let them read what is encrypted.
				continue
			}
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		return out, nil
	}
	if p, ok := encryptionPrefix(stored); ok {
		return nil, fmt.Errorf("no configured key can read data encrypted with %q", p)
	}
	return nil, ErrNotEncrypted
}

// encryptionPrefix returns "k8s:enc:PROVIDER:v1:KEY" of an encrypted value.
func encryptionPrefix(stored []byte) (string, bool) {
	if !bytes.HasPrefix(stored, []byte(encryptedPrefix)) {
		return "", false
	}
	// k8s:enc:PROVIDER:v1:KEY: is six colon-separated fields, the last empty.
	n, end := 0, -1
	for i, b := range stored {
		if b == ':' {
			n++
			if n == 5 {
				end = i
				break
			}
		}
	}
	if end < 0 || end > 256 {
		return encryptedPrefix + "...", true
	}
	return string(stored[:end]), true
}

// identity stores plaintext.
type identity struct{}

func (identity) seal(plain, _ []byte) ([]byte, error) { return plain, nil }

func (identity) open(stored, _ []byte) ([]byte, error) {
	if bytes.HasPrefix(stored, []byte(encryptedPrefix)) {
		return nil, ErrEncrypted
	}
	return stored, nil
}

// Identity is the transformer of resources without encryption: plaintext
// both ways, and an error (ErrEncrypted) for encrypted values rather than
// handing ciphertext to a JSON decoder.
func Identity() Transformer { return identityTransformer }

var identityTransformer = &chain{readers: []prefixed{{name: "identity", value: identity{}}}}

// aesCBC is AES-CBC with PKCS#7 padding and a random IV before the
// ciphertext: k8s:enc:aescbc:v1.
type aesCBC struct{ block cipher.Block }

func (a aesCBC) seal(plain, _ []byte) ([]byte, error) {
	bs := a.block.BlockSize()
	pad := bs - len(plain)%bs
	out := make([]byte, bs+len(plain)+pad)
	iv := out[:bs]
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("read iv: %w", err)
	}
	body := out[bs:]
	copy(body, plain)
	for i := len(plain); i < len(body); i++ {
		body[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(a.block, iv).CryptBlocks(body, body)
	return out, nil
}

func (a aesCBC) open(sealed, _ []byte) ([]byte, error) {
	bs := a.block.BlockSize()
	if len(sealed) < 2*bs {
		return nil, errors.New("the stored data was shorter than the required size")
	}
	iv, body := sealed[:bs], sealed[bs:]
	if len(body)%bs != 0 {
		return nil, errors.New("the stored data is not a multiple of the block size")
	}
	out := make([]byte, len(body))
	cipher.NewCBCDecrypter(a.block, iv).CryptBlocks(out, body)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs {
		return nil, errors.New("invalid PKCS7 data (wrong key or corrupted value)")
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errors.New("invalid PKCS7 data (wrong key or corrupted value)")
		}
	}
	return out[:len(out)-pad], nil
}

// aesGCM is AES-GCM with a random 12-byte nonce before the ciphertext and
// the authenticated data bound in: k8s:enc:aesgcm:v1. Random nonces are
// safe for about 2^32 writes per key; rotate keys well before that, as
// Kubernetes advises.
type aesGCM struct{ aead cipher.AEAD }

func (a aesGCM) seal(plain, ad []byte) ([]byte, error) {
	ns := a.aead.NonceSize()
	out := make([]byte, ns, ns+len(plain)+a.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("read nonce: %w", err)
	}
	return a.aead.Seal(out, out[:ns], plain, ad), nil
}

func (a aesGCM) open(sealed, ad []byte) ([]byte, error) {
	ns := a.aead.NonceSize()
	if len(sealed) < ns+a.aead.Overhead() {
		return nil, errors.New("the stored data was shorter than the required size")
	}
	out, err := a.aead.Open(nil, sealed[:ns], sealed[ns:], ad)
	if err != nil {
		return nil, fmt.Errorf("%w (wrong key, tampered value, or value moved from another key)", err)
	}
	return out, nil
}

// secretBox is NaCl secretbox with a random 24-byte nonce before the
// ciphertext: k8s:enc:secretbox:v1.
type secretBox struct{ key [32]byte }

func (s *secretBox) seal(plain, _ []byte) ([]byte, error) {
	var nonce [24]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("read nonce: %w", err)
	}
	return secretbox.Seal(nonce[:], plain, &nonce, &s.key), nil
}

func (s *secretBox) open(sealed, _ []byte) ([]byte, error) {
	var nonce [24]byte
	if len(sealed) < len(nonce)+secretbox.Overhead {
		return nil, errors.New("the stored data was shorter than the required size")
	}
	copy(nonce[:], sealed)
	out, ok := secretbox.Open(nil, sealed[len(nonce):], &nonce, &s.key)
	if !ok {
		return nil, errors.New("message authentication failed (wrong key or tampered value)")
	}
	return out, nil
}

// newChain builds the transformer of one rule's providers. The
// configuration must have passed Validate.
func newChain(providers []ProviderConfiguration) (*chain, error) {
	c := &chain{}
	for _, p := range providers {
		switch {
		case p.Identity != nil:
			c.readers = append(c.readers, prefixed{name: "identity", value: identity{}})
		case p.AESCBC != nil:
			if err := c.addKeys("aescbc", p.AESCBC.Keys, func(k []byte) (value, error) {
				b, err := aes.NewCipher(k)
				return aesCBC{b}, err
			}); err != nil {
				return nil, err
			}
		case p.AESGCM != nil:
			if err := c.addKeys("aesgcm", p.AESGCM.Keys, func(k []byte) (value, error) {
				b, err := aes.NewCipher(k)
				if err != nil {
					return nil, err
				}
				g, err := cipher.NewGCM(b)
				return aesGCM{g}, err
			}); err != nil {
				return nil, err
			}
		case p.Secretbox != nil:
			if err := c.addKeys("secretbox", p.Secretbox.Keys, func(k []byte) (value, error) {
				if len(k) != 32 {
					return nil, fmt.Errorf("secretbox key is %d bytes, want 32", len(k))
				}
				s := &secretBox{}
				copy(s.key[:], k)
				return s, nil
			}); err != nil {
				return nil, err
			}
		default:
			return nil, errors.New("unsupported provider")
		}
	}
	if len(c.readers) == 0 {
		return nil, errors.New("no providers")
	}
	return c, nil
}

func (c *chain) addKeys(provider string, keys []Key, mk func([]byte) (value, error)) error {
	for _, k := range keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return fmt.Errorf("%s key %q: %w", provider, k.Name, err)
		}
		v, err := mk(secret)
		if err != nil {
			return fmt.Errorf("%s key %q: %w", provider, k.Name, err)
		}
		c.readers = append(c.readers, prefixed{
			prefix: []byte(encryptedPrefix + provider + ":v1:" + k.Name + ":"),
			name:   fmt.Sprintf("%s key %q", provider, k.Name),
			value:  v,
		})
	}
	return nil
}
