package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

func mustCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("test-ca", time.Hour*24*365)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func mustParseCert(t *testing.T, p []byte) *x509.Certificate {
	t.Helper()
	c, err := ParseCertPEM(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewCA(t *testing.T) {
	t.Parallel()
	ca := mustCA(t)
	c := ca.Cert
	if !c.IsCA || !c.BasicConstraintsValid {
		t.Errorf("IsCA=%v BasicConstraintsValid=%v", c.IsCA, c.BasicConstraintsValid)
	}
	if c.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("KeyUsage %b lacks CertSign", c.KeyUsage)
	}
	if c.Subject.CommonName != "test-ca" || c.Issuer.CommonName != "test-ca" {
		t.Errorf("subject %v issuer %v", c.Subject, c.Issuer)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	if _, ok := ca.Key.(*ecdsa.PrivateKey); !ok {
		t.Errorf("key type %T, want ECDSA", ca.Key)
	}
	if got := c.NotAfter.Sub(c.NotBefore); got < 365*24*time.Hour || got > 365*24*time.Hour+backdate+time.Minute {
		t.Errorf("validity %v", got)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool()}); err != nil {
		t.Errorf("CA does not verify against its own pool: %v", err)
	}
	if _, err := NewCA("", 0); err == nil {
		t.Error("NewCA with empty CN: want error")
	}
	def, err := NewCA("d", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := def.Cert.NotAfter.Sub(def.Cert.NotBefore); got < DefaultCAValidity {
		t.Errorf("default CA validity %v", got)
	}
}

func TestPEMRoundTripAndKubernetesCompat(t *testing.T) {
	t.Parallel()
	ca := mustCA(t)
	certPEM := EncodeCertPEM(ca.Cert)
	keyPEM, err := EncodeKeyPEM(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	// what client-go (and so kubectl) reads
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil || len(certs) != 1 || !certs[0].Equal(ca.Cert) {
		t.Fatalf("client-go cert.ParseCertsPEM: %v %d", err, len(certs))
	}
	k, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatalf("client-go keyutil.ParsePrivateKeyPEM: %v", err)
	}
	if !k.(*ecdsa.PrivateKey).Equal(ca.Key) {
		t.Fatal("client-go parsed a different key")
	}
	// and what client-go writes, we read
	back, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Cert.Equal(ca.Cert) {
		t.Fatal("round trip changed the certificate")
	}
}

func TestParseKeyPEM(t *testing.T) {
	t.Parallel()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	pkcs8EC, _ := x509.MarshalPKCS8PrivateKey(ec)
	pkcs8RSA, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	pkcs8Ed, _ := x509.MarshalPKCS8PrivateKey(ed)
	block := func(typ string, b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}) }
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"sec1", block("EC PRIVATE KEY", sec1), ""},
		{"pkcs1", block("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), ""},
		{"pkcs8 ec", block("PRIVATE KEY", pkcs8EC), ""},
		{"pkcs8 rsa", block("PRIVATE KEY", pkcs8RSA), ""},
		{"pkcs8 ed25519", block("PRIVATE KEY", pkcs8Ed), ""},
		{"after a certificate", append(EncodeCertPEM(mustCA(t).Cert), block("EC PRIVATE KEY", sec1)...), ""},
		{"empty", nil, "no private key block"},
		{"garbage", []byte("not pem"), "no private key block"},
		{"corrupt sec1", block("EC PRIVATE KEY", []byte{1, 2, 3}), "parse EC private key"},
		{"certificate only", EncodeCertPEM(mustCA(t).Cert), "no private key block"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k, err := ParseKeyPEM(tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || k == nil {
				t.Fatalf("ParseKeyPEM: %v", err)
			}
		})
	}
	if _, err := EncodeKeyPEM(ed); err == nil {
		t.Error("EncodeKeyPEM(ed25519): want error for an unsupported type")
	}
	rsaPEM, err := EncodeKeyPEM(rsaKey)
	if err != nil || !bytes.Contains(rsaPEM, []byte("RSA PRIVATE KEY")) {
		t.Errorf("EncodeKeyPEM(rsa) = %q, %v", rsaPEM, err)
	}
}

func TestParseCertsPEM(t *testing.T) {
	t.Parallel()
	a, b := mustCA(t), mustCA(t)
	bundle := append(a.CertPEM(), b.CertPEM()...)
	certs, err := ParseCertsPEM(bundle)
	if err != nil || len(certs) != 2 || !certs[0].Equal(a.Cert) || !certs[1].Equal(b.Cert) {
		t.Fatalf("ParseCertsPEM: %d certs, %v", len(certs), err)
	}
	if _, err := ParseCertPEM([]byte("junk")); err == nil {
		t.Error("ParseCertPEM(junk): want error")
	}
	bad := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{0x30, 0x01}})
	if _, err := ParseCertPEM(bad); err == nil {
		t.Error("ParseCertPEM(corrupt DER): want error")
	}
}

func TestWriteFilesLoadCA(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pki")
	ca := mustCA(t)
	if err := ca.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{CACertFile: 0o644, CAKeyFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	back, err := LoadCA(filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Cert.Equal(ca.Cert) || !publicKeysEqual(back.Cert.PublicKey, ca.Key) {
		t.Fatal("LoadCA returned a different CA")
	}

	// a key that is not the CA's is refused
	other := mustCA(t)
	otherKey, _ := EncodeKeyPEM(other.Key)
	if _, err := ParseCA(ca.CertPEM(), otherKey); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("mismatched key: err = %v", err)
	}
	// a leaf certificate is not a CA
	leaf, leafKey, err := ca.IssueClient("u", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseCA(leaf, leafKey); err == nil || !strings.Contains(err.Error(), "not a CA") {
		t.Errorf("leaf as CA: err = %v", err)
	}
	if _, err := LoadCA(filepath.Join(dir, "nope.crt"), filepath.Join(dir, CAKeyFile)); err == nil {
		t.Error("LoadCA of a missing file: want error")
	}
}

func TestIssueServing(t *testing.T) {
	t.Parallel()
	ca := mustCA(t)
	certPEM, keyPEM, err := ca.IssueServing("kube-apiserver", []string{"kubernetes", "localhost"}, []net.IP{net.ParseIP("10.0.0.5")}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := mustParseCert(t, certPEM)
	key, err := ParseKeyPEM(keyPEM)
	if err != nil || !publicKeysEqual(c.PublicKey, key) {
		t.Fatalf("key does not match: %v", err)
	}
	if c.IsCA {
		t.Error("serving certificate is a CA")
	}
	for _, host := range []string{"kubernetes", "localhost", "10.0.0.5"} {
		if _, err := c.Verify(x509.VerifyOptions{DNSName: host, Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
	if _, err := c.Verify(x509.VerifyOptions{DNSName: "evil.example", Roots: ca.Pool()}); err == nil {
		t.Error("verified for a name not in the certificate")
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("serving certificate verified for client auth")
	}
	if d := c.NotAfter.Sub(c.NotBefore); d < time.Hour || d > time.Hour+backdate+time.Minute {
		t.Errorf("validity %v", d)
	}
	if _, _, err := ca.IssueServing("x", nil, nil, 0); err == nil {
		t.Error("serving certificate without names: want error")
	}
}

func TestIssueClient(t *testing.T) {
	t.Parallel()
	ca := mustCA(t)
	certPEM, _, err := ca.IssueClient("alice", []string{"dev", "ops"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := mustParseCert(t, certPEM)
	if c.Subject.CommonName != "alice" || !slices.Equal(c.Subject.Organization, []string{"dev", "ops"}) {
		t.Errorf("subject %v", c.Subject)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("verify for client auth: %v", err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("client certificate verified for server auth")
	}
	if d := c.NotAfter.Sub(c.NotBefore); d < DefaultCertValidity {
		t.Errorf("default validity %v", d)
	}
	if _, _, err := ca.IssueClient("", nil, 0); err == nil {
		t.Error("client certificate without user: want error")
	}
}

func TestValidityCappedByCA(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("short", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := ca.IssueClient("u", nil, 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if c := mustParseCert(t, certPEM); !c.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("NotAfter %v, want the CA's %v", c.NotAfter, ca.Cert.NotAfter)
	}
}

func TestSignCSR(t *testing.T) {
	t.Parallel()
	ca := mustCA(t)
	csrPEM, keyPEM, err := NewCSR(NodeUser("node-a"), []string{NodesGroup})
	if err != nil {
		t.Fatal(err)
	}
	csr, err := ParseCSRPEM(csrPEM)
	if err != nil {
		t.Fatal(err)
	}
	if csr.Subject.CommonName != "system:node:node-a" || !slices.Equal(csr.Subject.Organization, []string{"system:nodes"}) {
		t.Fatalf("CSR subject %v", csr.Subject)
	}

	// a CSR whose signature does not cover its content
	der, _ := pem.Decode(csrPEM)
	tampered := bytes.Clone(der.Bytes)
	i := bytes.Index(tampered, []byte("node-a"))
	tampered[i] = 'X'
	tamperedPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: tampered})

	// a CSR with SANs is copied as asked
	key, _ := NewPrivateKey()
	sanDER, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:node-b", Organization: []string{"system:nodes"}},
		DNSNames:    []string{"node-b"},
		IPAddresses: []net.IP{net.ParseIP("192.168.1.2")},
	}, key)
	sanPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: sanDER})

	tests := []struct {
		name    string
		csr     []byte
		usages  []string
		wantErr string
		check   func(t *testing.T, c *x509.Certificate)
	}{
		{name: "kubelet client", csr: csrPEM, usages: KubeletClientUsages, check: func(t *testing.T, c *x509.Certificate) {
			if c.Subject.CommonName != "system:node:node-a" || !slices.Equal(c.Subject.Organization, []string{"system:nodes"}) {
				t.Errorf("subject %v", c.Subject)
			}
			if c.KeyUsage != x509.KeyUsageDigitalSignature || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
				t.Errorf("usages %b %v", c.KeyUsage, c.ExtKeyUsage)
			}
			k, _ := ParseKeyPEM(keyPEM)
			if !publicKeysEqual(c.PublicKey, k) {
				t.Error("certificate is not for the CSR's key")
			}
			if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Error(err)
			}
		}},
		{name: "serving with SANs", csr: sanPEM, usages: []string{"digital signature", "key encipherment", "server auth"}, check: func(t *testing.T, c *x509.Certificate) {
			if _, err := c.Verify(x509.VerifyOptions{DNSName: "192.168.1.2", Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Error(err)
			}
			if !slices.Equal(c.DNSNames, []string{"node-b"}) || c.IsCA {
				t.Errorf("DNSNames %v IsCA %v", c.DNSNames, c.IsCA)
			}
		}},
		{name: "tampered", csr: tamperedPEM, usages: KubeletClientUsages, wantErr: "signature"},
		{name: "not a CSR", csr: ca.CertPEM(), usages: KubeletClientUsages, wantErr: "no CERTIFICATE REQUEST"},
		{name: "unknown usage", csr: csrPEM, usages: []string{"client auth", "fly"}, wantErr: `unrecognized usage values: ["fly"]`},
		{name: "no usages", csr: csrPEM, usages: nil, wantErr: "at least one usage"},
		{name: "cert sign", csr: csrPEM, usages: []string{"cert sign", "client auth"}, wantErr: "not allowed"},
		{name: "crl sign", csr: csrPEM, usages: []string{"crl sign"}, wantErr: "not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := ca.SignCSR(tc.csr, tc.usages, time.Hour)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, mustParseCert(t, out))
		})
	}
}

func TestKeyUsagesFromStrings(t *testing.T) {
	t.Parallel()
	ku, eku, err := KeyUsagesFromStrings([]string{"signing", "key encipherment", "client auth", "server auth", "client auth", "s/mime"})
	if err != nil {
		t.Fatal(err)
	}
	if ku != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment {
		t.Errorf("key usage %b", ku)
	}
	want := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageEmailProtection}
	if !slices.Equal(eku, want) {
		t.Errorf("ext key usage %v, want %v", eku, want)
	}
}

func TestNodeUser(t *testing.T) {
	t.Parallel()
	if NodeUser("a") != "system:node:a" {
		t.Error(NodeUser("a"))
	}
	for in, want := range map[string]string{"system:node:a": "a", "system:node:": "", "alice": ""} {
		got, ok := NodeNameFromUser(in)
		if got != want || ok != (want != "") {
			t.Errorf("NodeNameFromUser(%q) = %q, %v", in, got, ok)
		}
	}
	if _, _, err := NewCSR("", nil); err == nil {
		t.Error("NewCSR without user: want error")
	}
}
