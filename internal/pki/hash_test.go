package pki

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCAHashFormat(t *testing.T) {
	t.Parallel()
	ca := mustCA(t)
	h, err := CAHash(ca.CertPEM())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("hash %q not in kubeadm's format", h)
	}
	// computed another way: SHA-256 of the re-marshalled public key
	spki, err := x509.MarshalPKIXPublicKey(ca.Key.Public())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spki)
	if want := "sha256:" + hex.EncodeToString(sum[:]); h != want {
		t.Fatalf("CAHash = %s, want %s", h, want)
	}
	if ca.Hash() != h {
		t.Errorf("CA.Hash() = %s, want %s", ca.Hash(), h)
	}
	if _, err := CAHash([]byte("junk")); err == nil {
		t.Error("CAHash(junk): want error")
	}
}

// TestCAHashMatchesOpenSSL runs the command kubeadm documents for computing
// --discovery-token-ca-cert-hash.
func TestCAHashMatchesOpenSSL(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	ca := mustCA(t)
	pub := exec.Command("openssl", "x509", "-pubkey", "-noout")
	pub.Stdin = bytes.NewReader(ca.CertPEM())
	pubPEM, err := pub.Output()
	if err != nil {
		t.Fatal(err)
	}
	der := exec.Command("openssl", "pkey", "-pubin", "-outform", "der")
	der.Stdin = bytes.NewReader(pubPEM)
	derOut, err := der.Output()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(derOut)
	if want := "sha256:" + hex.EncodeToString(sum[:]); ca.Hash() != want {
		t.Fatalf("CAHash = %s, openssl says %s", ca.Hash(), want)
	}
}

func TestVerifyCAHash(t *testing.T) {
	t.Parallel()
	ca, other := mustCA(t), mustCA(t)
	h := ca.Hash()
	hexPart := strings.TrimPrefix(h, "sha256:")
	tests := []struct {
		name    string
		pem     []byte
		hash    string
		wantErr string
	}{
		{"match", ca.CertPEM(), h, ""},
		{"upper case hex and format", ca.CertPEM(), "SHA256:" + strings.ToUpper(hexPart), ""},
		{"match second in bundle", append(other.CertPEM(), ca.CertPEM()...), h, ""},
		{"mismatch", other.CertPEM(), h, "none of the public keys"},
		{"no format", ca.CertPEM(), hexPart, `expected "format:hex-value"`},
		{"unknown format", ca.CertPEM(), "md5:" + hexPart, `unknown hash format "md5"`},
		{"too short", ca.CertPEM(), "sha256:abcd", "expected a 32 byte SHA-256 hash, found 2 bytes"},
		{"not hex", ca.CertPEM(), "sha256:" + strings.Repeat("zz", 32), "could not decode"},
		{"extra colon", ca.CertPEM(), h + ":x", `expected "format:hex-value"`},
		{"no certificate", []byte("junk"), h, "no CERTIFICATE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := VerifyCAHash(tc.pem, tc.hash)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestFetchPinnedCA(t *testing.T) {
	t.Parallel()
	b, err := EnsureServing(t.TempDir(), ServingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withCA, err := b.ServerTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	leafOnly, err := tls.X509KeyPair(b.ServingCertPEM, b.ServingKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	start := func(cfg *tls.Config) string {
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.TLS = cfg
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.URL
	}
	good := start(withCA)
	noChain := start(&tls.Config{Certificates: []tls.Certificate{leafOnly}})
	// a server for a name the certificate does not hold: the chain holds
	// the pinned CA but the leaf must still match the host dialed
	otherCA := mustCA(t)
	oc, ok, _ := otherCA.IssueServing("x", []string{"elsewhere.example"}, nil, time.Hour)
	otherPair, _ := tls.X509KeyPair(append(oc, otherCA.CertPEM()...), ok)
	impostor := start(&tls.Config{Certificates: []tls.Certificate{otherPair}})

	tests := []struct {
		name, url, hash, wantErr string
	}{
		{"pinned CA", good, b.CA.Hash(), ""},
		{"host:port form", strings.TrimPrefix(good, "https://"), b.CA.Hash(), ""},
		{"wrong pin", good, otherCA.Hash(), "none of the public keys"},
		{"no CA in chain", noChain, b.CA.Hash(), "did not present its CA"},
		{"impostor with its own CA", impostor, b.CA.Hash(), "none of the public keys"},
		{"impostor pinned but wrong host", impostor, otherCA.Hash(), "does not verify against the pinned CA"},
		{"bad pin", good, "sha256:00", "expected a 32 byte"},
		{"http scheme", strings.Replace(good, "https", "http", 1), b.CA.Hash(), "scheme must be https"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			got, err := FetchPinnedCA(ctx, tc.url, tc.hash)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, b.CA.CertPEM()) {
				t.Fatal("fetched a different CA")
			}
		})
	}
}

func TestSplitServer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"https://10.0.0.1:6443": {"10.0.0.1:6443", "10.0.0.1"},
		"https://api.example":   {"api.example:6443", "api.example"},
		"api:443":               {"api:443", "api"},
		"[::1]:6443":            {"[::1]:6443", "::1"},
		"https://[::1]":         {"[::1]:6443", "::1"},
	} {
		hp, h, err := splitServer(in)
		if err != nil || hp != want[0] || h != want[1] {
			t.Errorf("splitServer(%q) = %q, %q, %v; want %q", in, hp, h, err, want)
		}
	}
	if _, _, err := splitServer(""); err == nil {
		t.Error("empty server: want error")
	}
}
