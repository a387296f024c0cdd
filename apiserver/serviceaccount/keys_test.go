package serviceaccount

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// rsaPublicKey and its key ID are Kubernetes' own test vector
// (pkg/serviceaccount/keyid_test.go): tokens signed by kube-apiserver with
// this key name it by exactly that kid.
const rsaPublicKey = `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA249XwEo9k4tM8fMxV7zx
OhcrP+WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt+ecI
zshKuv1gKIxbbLQMOuK1eA/4HALyEkFgmS/tleLJrhc65tKPMGD+pKQ/xhmzRuCG
51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJU
j7OTh/AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv+OrN80j6xrw0OjEi
B4Ycr0PqfzZcvy8efTtFQ/Jnc4Bp1zUtFXt7+QeevePtQ2EcyELXE0i63T1CujRM
WwIDAQAB
-----END PUBLIC KEY-----
`

func TestKeyIDMatchesKubernetes(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "sa.pub")
	if err := os.WriteFile(f, []byte(rsaPublicKey), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := ReadPublicKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	kid, err := KeyID(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"; kid != want {
		t.Errorf("kid = %q, want %q", kid, want)
	}
}

// TestEnsureKeysKeepsTheKey: the generated pair survives a restart, so
// issued tokens stay valid.
func TestEnsureKeysKeepsTheKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := EnsureKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EnsureKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	if first.signKID != again.signKID || first.alg != "RS256" {
		t.Errorf("key changed across starts: %s (%s) then %s", first.signKID, first.alg, again.signKID)
	}
	pubs, err := ReadPublicKeys(filepath.Join(dir, PubKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if kid, _ := KeyID(pubs[0]); kid != first.signKID {
		t.Errorf("sa.pub has kid %s, the signing key %s", kid, first.signKID)
	}
	if fi, err := os.Stat(filepath.Join(dir, KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("sa.key: %v %v", fi, err)
	}
}

// TestIssuerConcurrent: one issuer (one jose.Signer) serves concurrent
// TokenRequests.
func TestIssuerConcurrent(t *testing.T) {
	t.Parallel()
	keys, err := EnsureKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	iss := NewIssuer("https://x", keys)
	sa := &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "sa", UID: "u"}}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			if _, _, err := iss.Sign(TokenSpec{ServiceAccount: sa, Audiences: []string{"a"}, ExpirationSeconds: 600}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
