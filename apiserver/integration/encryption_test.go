package integration

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestSecretsEncryptedAtRest turns on aescbc for secrets and checks that a
// raw etcd read shows no plaintext while the API reads the secret back
// intact, and that a secret written before encryption stays readable.
func TestSecretsEncryptedAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	cfg := filepath.Join(dir, "encryption.yaml")
	if err := os.WriteFile(cfg, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: `+key+`
  - identity: {}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// First without encryption: a plaintext secret.
	opts := apiservertest.Options(dir)
	s := apiservertest.StartWith(t, opts)
	c := newClient(t, s)
	c.must(201, "POST", "/api/v1/namespaces/default/secrets", map[string]any{"metadata": map[string]any{"name": "old"},
		"stringData": map[string]string{"password": "before-encryption"}})
	s.Shutdown()

	opts.EncryptionProviderConfig = cfg
	s = apiservertest.StartWith(t, opts)
	c = newClient(t, s)
	c.must(201, "POST", "/api/v1/namespaces/default/secrets", map[string]any{"metadata": map[string]any{"name": "db"},
		"stringData": map[string]string{"password": "hunter2-plaintext"}})
	raw, err := s.Backend().Client().Get(t.Context(), "/registry/secrets/default/db")
	if err != nil || len(raw.Kvs) != 1 {
		t.Fatalf("raw read: %v", err)
	}
	v := raw.Kvs[0].Value
	if !bytes.HasPrefix(v, []byte("k8s:enc:aescbc:v1:key1:")) {
		t.Fatalf("stored value does not carry the aescbc prefix: %.40q", v)
	}
	for _, plain := range []string{"hunter2-plaintext", base64.StdEncoding.EncodeToString([]byte("hunter2-plaintext")), `"password"`} {
		if bytes.Contains(v, []byte(plain)) {
			t.Fatalf("plaintext %q found in etcd", plain)
		}
	}
	got := c.must(200, "GET", "/api/v1/namespaces/default/secrets/db", nil)
	if got["data"].(map[string]any)["password"] != base64.StdEncoding.EncodeToString([]byte("hunter2-plaintext")) {
		t.Fatalf("secret read back = %v", got["data"])
	}
	old := c.must(200, "GET", "/api/v1/namespaces/default/secrets/old", nil)
	if old["data"].(map[string]any)["password"] != base64.StdEncoding.EncodeToString([]byte("before-encryption")) {
		t.Fatalf("pre-encryption secret = %v", old["data"])
	}
	// Lists and watches (the cache) serve decrypted objects too.
	l := c.must(200, "GET", "/api/v1/namespaces/default/secrets", nil)
	if n := len(l["items"].([]any)); n != 2 {
		t.Fatalf("list has %d secrets", n)
	}
	// An unchanged update writes nothing although every encryption differs.
	again := c.must(200, "PUT", "/api/v1/namespaces/default/secrets/db", got)
	if rv(again) != rv(got) {
		t.Fatalf("no-op update of an encrypted secret wrote: %s -> %s", rv(got), rv(again))
	}
}
