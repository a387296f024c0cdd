package encryption

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func key(b byte, n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, n)) }

var (
	key1 = key(1, 32)
	key2 = key(2, 32)
)

const secretJSON = `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"default"},"data":{"password":"aHVudGVyMg=="}}`

// build parses a YAML configuration and fails the test on error.
func build(t *testing.T, yamlText string) *Transformers {
	t.Helper()
	c, err := Parse([]byte(yamlText))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	tr, err := New(c)
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	return tr
}

func oneProvider(provider string, keys ...[2]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n")
	if provider == "identity" {
		b.WriteString("  - identity: {}\n")
		return b.String()
	}
	fmt.Fprintf(&b, "  - %s:\n      keys:\n", provider)
	for _, k := range keys {
		fmt.Fprintf(&b, "      - name: %s\n        secret: %s\n", k[0], k[1])
	}
	b.WriteString("  - identity: {}\n")
	return b.String()
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ad := []byte("secrets/default/s")
	cases := []struct {
		provider string
		prefix   string
	}{
		{"aescbc", "k8s:enc:aescbc:v1:key1:"},
		{"aesgcm", "k8s:enc:aesgcm:v1:key1:"},
		{"secretbox", "k8s:enc:secretbox:v1:key1:"},
		{"identity", "{"},
	}
	for _, c := range cases {
		t.Run(c.provider, func(t *testing.T) {
			t.Parallel()
			tr := build(t, oneProvider(c.provider, [2]string{"key1", key1})).For("secrets", "")
			for _, plain := range []string{secretJSON, "", "x", strings.Repeat("y", 16), strings.Repeat("z", 1000)} {
				stored, err := tr.TransformToStorage([]byte(plain), ad)
				if err != nil {
					t.Fatalf("to storage: %v", err)
				}
				if plain != "" && !bytes.HasPrefix(stored, []byte(c.prefix)) && !(c.provider == "identity") {
					t.Fatalf("stored value %q lacks prefix %q", stored, c.prefix)
				}
				if c.provider != "identity" && len(plain) > 3 && bytes.Contains(stored, []byte(plain[:4])) {
					t.Fatalf("stored value contains plaintext: %q", stored)
				}
				got, err := tr.TransformFromStorage(stored, ad)
				if err != nil {
					t.Fatalf("from storage: %v", err)
				}
				if string(got) != plain {
					t.Fatalf("round trip: got %q, want %q", got, plain)
				}
			}
		})
	}
}

func TestNoPlaintextInEncryptedValue(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"aescbc", "aesgcm", "secretbox"} {
		tr := build(t, oneProvider(p, [2]string{"key1", key1})).For("secrets", "")
		stored, err := tr.TransformToStorage([]byte(secretJSON), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, needle := range []string{"aHVudGVyMg==", "password", "Secret", "default"} {
			if bytes.Contains(stored, []byte(needle)) {
				t.Errorf("%s: stored value contains %q", p, needle)
			}
		}
		// Two writes of the same value differ (random IV/nonce).
		again, _ := tr.TransformToStorage([]byte(secretJSON), nil)
		if bytes.Equal(stored, again) {
			t.Errorf("%s: two encryptions of one value are identical", p)
		}
	}
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"aescbc", "aesgcm", "secretbox"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			ad := []byte("secrets/ns/a")
			old := build(t, oneProvider(p, [2]string{"key1", key1})).For("secrets", "")
			oldValue, err := old.TransformToStorage([]byte(secretJSON), ad)
			if err != nil {
				t.Fatal(err)
			}
			rotated := build(t, oneProvider(p, [2]string{"key2", key2}, [2]string{"key1", key1})).For("secrets", "")
			got, err := rotated.TransformFromStorage(oldValue, ad)
			if err != nil || string(got) != secretJSON {
				t.Fatalf("read key1 data after rotation: %q, %v", got, err)
			}
			newValue, err := rotated.TransformToStorage([]byte(secretJSON), ad)
			if err != nil {
				t.Fatal(err)
			}
			if want := "k8s:enc:" + p + ":v1:key2:"; !bytes.HasPrefix(newValue, []byte(want)) {
				t.Fatalf("rotated write %q, want prefix %q", newValue[:30], want)
			}
			// The old configuration (key1 only) cannot read key2 data, and
			// says which key it would need.
			_, err = old.TransformFromStorage(newValue, ad)
			if err == nil || !strings.Contains(err.Error(), "k8s:enc:"+p+":v1:key2") {
				t.Fatalf("old config reading key2 data: %v", err)
			}
		})
	}
}

func TestIdentityFallback(t *testing.T) {
	t.Parallel()
	// Plaintext written before encryption was turned on stays readable when
	// identity is listed after the encrypting provider.
	tr := build(t, oneProvider("aesgcm", [2]string{"key1", key1})).For("secrets", "")
	got, err := tr.TransformFromStorage([]byte(secretJSON), nil)
	if err != nil || string(got) != secretJSON {
		t.Fatalf("plaintext read: %q, %v", got, err)
	}

	// Without identity, plaintext is refused (as in Kubernetes).
	noIdentity := build(t, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys: [{name: key1, secret: `+key1+`}]
`).For("secrets", "")
	if _, err := noIdentity.TransformFromStorage([]byte(secretJSON), nil); !errors.Is(err, ErrNotEncrypted) {
		t.Fatalf("plaintext without identity: %v, want ErrNotEncrypted", err)
	}

	// identity first (turning encryption off): writes plaintext, still
	// reads values encrypted with the keys after it.
	enc, _ := tr.TransformToStorage([]byte(secretJSON), nil)
	off := build(t, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - identity: {}
  - aesgcm:
      keys: [{name: key1, secret: `+key1+`}]
`).For("secrets", "")
	if got, err := off.TransformFromStorage(enc, nil); err != nil || string(got) != secretJSON {
		t.Fatalf("identity-first read of encrypted data: %q, %v", got, err)
	}
	if w, _ := off.TransformToStorage([]byte(secretJSON), nil); string(w) != secretJSON {
		t.Fatalf("identity-first write: %q", w)
	}

	// A resource without a rule is Identity: plaintext through, encrypted
	// values refused rather than handed to a JSON decoder.
	plain := build(t, oneProvider("aesgcm", [2]string{"key1", key1})).For("configmaps", "")
	if plain != Identity() {
		t.Fatalf("configmaps: got %T, want Identity", plain)
	}
	if _, err := plain.TransformFromStorage(enc, nil); err == nil {
		t.Fatal("identity read encrypted data without error")
	}
}

func TestTamperingAndWrongKey(t *testing.T) {
	t.Parallel()
	ad := []byte("secrets/default/s")
	gcm := build(t, oneProvider("aesgcm", [2]string{"key1", key1})).For("secrets", "")
	stored, err := gcm.TransformToStorage([]byte(secretJSON), ad)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(stored)
	flipped[len(flipped)-5] ^= 0x01
	if _, err := gcm.TransformFromStorage(flipped, ad); err == nil || !strings.Contains(err.Error(), `aesgcm key "key1"`) {
		t.Fatalf("tampered gcm value: %v", err)
	}
	// The same ciphertext under another etcd key fails: it is bound to its key.
	if _, err := gcm.TransformFromStorage(stored, []byte("secrets/default/other")); err == nil {
		t.Fatal("gcm value moved to another key decrypted")
	}
	if _, err := gcm.TransformFromStorage(stored[:len("k8s:enc:aesgcm:v1:key1:")+5], ad); err == nil {
		t.Fatal("truncated gcm value decrypted")
	}

	// Same key name, different secret: the key cannot open the value.
	for _, p := range []string{"aescbc", "aesgcm", "secretbox"} {
		a := build(t, oneProvider(p, [2]string{"key1", key1})).For("secrets", "")
		b := build(t, oneProvider(p, [2]string{"key1", key2})).For("secrets", "")
		v, _ := a.TransformToStorage([]byte(secretJSON), ad)
		got, err := b.TransformFromStorage(v, ad)
		// CBC has no integrity: a wrong key yields garbage or bad padding,
		// never the plaintext.
		if err == nil && string(got) == secretJSON {
			t.Fatalf("%s: wrong key read the plaintext", p)
		}
		if p != "aescbc" && (err == nil || !strings.Contains(err.Error(), p+` key "key1"`)) {
			t.Fatalf("%s: wrong key error %v", p, err)
		}
	}
	// CBC padding check with a corrupted last block.
	cbc := build(t, oneProvider("aescbc", [2]string{"key1", key1})).For("secrets", "")
	v, _ := cbc.TransformToStorage([]byte(secretJSON), ad)
	v = v[:len(v)-3]
	if _, err := cbc.TransformFromStorage(v, ad); err == nil || !strings.Contains(err.Error(), "multiple of the block size") {
		t.Fatalf("cbc truncated: %v", err)
	}
	// An unknown provider's prefix names itself.
	if _, err := cbc.TransformFromStorage([]byte("k8s:enc:kms:v2:foo:xxxx"), ad); err == nil || !strings.Contains(err.Error(), `"k8s:enc:kms:v2:foo"`) {
		t.Fatalf("unknown prefix: %v", err)
	}
}

func TestFor(t *testing.T) {
	t.Parallel()
	tr := build(t, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets, deployments.apps]
  providers:
  - aesgcm:
      keys: [{name: exact, secret: `+key1+`}]
- resources: ["*.batch"]
  providers:
  - aesgcm:
      keys: [{name: batch, secret: `+key1+`}]
- resources: ["*."]
  providers:
  - aesgcm:
      keys: [{name: core, secret: `+key1+`}]
- resources: ["*.*"]
  providers:
  - aescbc:
      keys: [{name: all, secret: `+key2+`}]
`)
	cases := []struct{ resource, group, prefix string }{
		{"secrets", "", "k8s:enc:aesgcm:v1:exact:"},
		{"deployments", "apps", "k8s:enc:aesgcm:v1:exact:"},
		{"jobs", "batch", "k8s:enc:aesgcm:v1:batch:"},
		{"configmaps", "", "k8s:enc:aesgcm:v1:core:"},
		{"replicasets", "apps", "k8s:enc:aescbc:v1:all:"},
		{"leases", "coordination.k8s.io", "k8s:enc:aescbc:v1:all:"},
	}
	for _, c := range cases {
		out, err := tr.For(c.resource, c.group).TransformToStorage([]byte("{}"), nil)
		if err != nil || !bytes.HasPrefix(out, []byte(c.prefix)) {
			t.Errorf("For(%q, %q) wrote %q (%v), want prefix %q", c.resource, c.group, out, err, c.prefix)
		}
		if !tr.Configured(c.resource, c.group) {
			t.Errorf("Configured(%q, %q) = false", c.resource, c.group)
		}
	}
	var none *Transformers
	if none.For("secrets", "") != Identity() || none.Configured("secrets", "") {
		t.Error("nil Transformers is not identity")
	}
}

func TestDuplicateResourceReadsWithAllRules(t *testing.T) {
	t.Parallel()
	tr := build(t, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aesgcm:
      keys: [{name: a, secret: `+key1+`}]
- resources: [secrets]
  providers:
  - aescbc:
      keys: [{name: b, secret: `+key2+`}]
`).For("secrets", "")
	other := build(t, oneProvider("aescbc", [2]string{"b", key2})).For("secrets", "")
	v, _ := other.TransformToStorage([]byte(secretJSON), nil)
	if got, err := tr.TransformFromStorage(v, nil); err != nil || string(got) != secretJSON {
		t.Fatalf("second rule's key: %q, %v", got, err)
	}
	w, _ := tr.TransformToStorage([]byte(secretJSON), nil)
	if !bytes.HasPrefix(w, []byte("k8s:enc:aesgcm:v1:a:")) {
		t.Fatalf("write used %q", w[:22])
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	head := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"
	cases := []struct {
		name, yaml, want string
	}{
		{"wrong kind", "apiVersion: v1\nkind: ConfigMap\n", `expected apiVersion apiserver.config.k8s.io/v1, kind EncryptionConfiguration`},
		{"no resources", head + "resources: []\n", "resources: Required value: at least one resources is required"},
		{"empty resource list", head + "resources:\n- resources: []\n  providers: [{identity: {}}]\n", "resources[0].resources: Required value: at least one resources[0].resources is required"},
		{"no providers", head + "resources:\n- resources: [secrets]\n  providers: []\n", "resources[0].providers: Required value: at least one resources[0].providers is required"},
		{"bad base64", head + "resources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys: [{name: k, secret: '!!!'}]\n",
			`resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded`},
		{"short cbc key", head + "resources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys: [{name: k, secret: " + key(1, 16) + "}]\n",
			`resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]`},
		{"bad gcm key", head + "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys: [{name: k, secret: " + key(1, 8) + "}]\n",
			`secret is not of the expected length, got 8, expected one of [16 24 32]`},
		{"no keys", head + "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys: []\n",
			`resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required`},
		{"key without name", head + "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys: [{secret: " + key1 + "}]\n",
			`resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key`},
		{"duplicate key name", head + "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys: [{name: k, secret: " + key1 + "}, {name: k, secret: " + key2 + "}]\n",
			`resources[0].providers[0].aesgcm.keys[1].name: Duplicate value: "k"`},
		{"unknown provider", head + "resources:\n- resources: [secrets]\n  providers:\n  - aesxyz: {}\n",
			`resources[0].providers[0].aesxyz: Unsupported value: "aesxyz"`},
		{"empty provider", head + "resources:\n- resources: [secrets]\n  providers:\n  - {}\n",
			`resources[0].providers[0]: Invalid value: provider does not contain any of the expected providers`},
		{"two providers in one", head + "resources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n    aesgcm: {keys: [{name: k, secret: " + key1 + "}]}\n",
			`more than one provider specified in a single element`},
		{"kms", head + "resources:\n- resources: [secrets]\n  providers:\n  - kms: {name: x, endpoint: unix:///x.sock}\n",
			`the kms provider is not supported by minik8s`},
		{"star", head + "resources:\n- resources: ['*']\n  providers: [{identity: {}}]\n", `use '*.' to encrypt all the resources`},
		{"capitals", head + "resources:\n- resources: [Secrets]\n  providers: [{identity: {}}]\n", `resource name should not contain capital letters`},
		{"overlap", head + "resources:\n- resources: [secrets, '*.']\n  providers: [{identity: {}}]\n", `using overlapping resources`},
		{"unknown key field", head + "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm: {keys: [{name: k, secret: " + key1 + "}], extra: 1}\n", `unknown field "extra"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestMasking(t *testing.T) {
	t.Parallel()
	head := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
	cases := []struct{ yaml, want string }{
		{head + "- resources: ['*.']\n  providers: [{identity: {}}]\n- resources: [secrets]\n  providers: [{identity: {}}]\n", `resource "secrets" is masked by earlier rule "*."`},
		{head + "- resources: ['*.*']\n  providers: [{identity: {}}]\n- resources: [deployments.apps]\n  providers: [{identity: {}}]\n", `resource "deployments.apps" is masked by earlier rule "*.*"`},
		{head + "- resources: ['*.']\n  providers: [{identity: {}}]\n- resources: ['*.']\n  providers: [{identity: {}}]\n", `resource "*." is masked by earlier rule "*."`},
	}
	for _, c := range cases {
		cfg, err := Parse([]byte(c.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(cfg); err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "enc.json")
	cfg := `{"apiVersion":"apiserver.config.k8s.io/v1","kind":"EncryptionConfiguration","resources":[{"resources":["secrets"],"providers":[{"aescbc":{"keys":[{"name":"key1","secret":"` + key1 + `"}]}},{"identity":{}}]}]}`
	if err := os.WriteFile(jsonPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := tr.For("secrets", "").TransformToStorage([]byte(secretJSON), nil)
	if err != nil || !bytes.HasPrefix(out, []byte("k8s:enc:aescbc:v1:key1:")) {
		t.Fatalf("json config: %q, %v", out, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "read encryption provider configuration") {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources: []\n"), 0o600)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("invalid file error should name it: %v", err)
	}
}

// TestKubernetesFormat decrypts values laid out as kube-apiserver writes
// them, built here with the standard library from the documented format
// (prefix, IV or nonce, ciphertext; the etcd key as GCM additional data), so
// interchange does not rest on our own writer.
func TestKubernetesFormat(t *testing.T) {
	t.Parallel()
	raw := bytes.Repeat([]byte{1}, 32)
	block, err := aes.NewCipher(raw)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("hello, kubernetes")
	ad := []byte("/registry/secrets/default/s")

	iv := bytes.Repeat([]byte{7}, aes.BlockSize)
	padded := append(bytes.Clone(plain), bytes.Repeat([]byte{15}, 15)...) // 17 + 15 = 32
	ct := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, padded)
	cbcValue := append(append([]byte("k8s:enc:aescbc:v1:key1:"), iv...), ct...)

	gcm, _ := cipher.NewGCM(block)
	nonce := bytes.Repeat([]byte{9}, gcm.NonceSize())
	gcmValue := append(append([]byte("k8s:enc:aesgcm:v1:key1:"), nonce...), gcm.Seal(nil, nonce, plain, ad)...)

	for _, c := range []struct {
		provider string
		value    []byte
	}{{"aescbc", cbcValue}, {"aesgcm", gcmValue}} {
		tr := build(t, oneProvider(c.provider, [2]string{"key1", key1})).For("secrets", "")
		got, err := tr.TransformFromStorage(c.value, ad)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%s: got %q, %v", c.provider, got, err)
		}
	}

	// And our writer's output opens with the standard library alone.
	tr := build(t, oneProvider("aesgcm", [2]string{"key1", key1})).For("secrets", "")
	stored, _ := tr.TransformToStorage(plain, ad)
	body := stored[len("k8s:enc:aesgcm:v1:key1:"):]
	got, err := gcm.Open(nil, body[:gcm.NonceSize()], body[gcm.NonceSize():], ad)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("stdlib open of our aesgcm value: %q, %v", got, err)
	}
}
