package kubeconfig

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/client"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const sample = `apiVersion: v1
kind: Config
clusters:
- name: dev
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: pki/ca.crt
    tls-server-name: api.dev
users:
- name: alice
  user:
    client-certificate: pki/alice.crt
    client-key: /abs/alice.key
    tokenFile: token
contexts:
- name: alice@dev
  context:
    cluster: dev
    user: alice
    namespace: team
current-context: alice@dev
preferences: {}
`

func TestLoadResolvesRelativePaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "conf", "config"), sample)
	writeFile(t, filepath.Join(dir, "conf", "pki", "ca.crt"), "CA")
	writeFile(t, filepath.Join(dir, "conf", "pki", "alice.crt"), "CERT")
	writeFile(t, filepath.Join(dir, "conf", "token"), "s3cret\n")
	cfg, err := Load(filepath.Join(dir, "conf", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace("") != "team" || cfg.Namespace("nope") != "default" {
		t.Errorf("namespaces %q %q", cfg.Namespace(""), cfg.Namespace("nope"))
	}
	// The absolute key path does not exist: the error names it.
	_, err = cfg.ClientConfig("")
	if err == nil || !strings.Contains(err.Error(), "unable to read client-key /abs/alice.key for alice") {
		t.Fatalf("error %v", err)
	}
	cfg.Users[0].User.ClientKey = "pki/alice.key"
	writeFile(t, filepath.Join(dir, "conf", "pki", "alice.key"), "KEY")
	cc, err := cfg.ClientConfig("alice@dev")
	if err != nil {
		t.Fatal(err)
	}
	if cc.Host != "https://10.0.0.1:6443" || string(cc.CAData) != "CA" || string(cc.CertData) != "CERT" ||
		string(cc.KeyData) != "KEY" || cc.BearerToken != "s3cret" || cc.ServerName != "api.dev" || cc.Insecure {
		t.Errorf("client config %+v", cc)
	}
}

func TestLoadDefaultPrecedence(t *testing.T) {
	// Not parallel: it sets $KUBECONFIG and $HOME.
	dir := t.TempDir()
	first := `clusters:
- name: c
  cluster: {server: "https://first"}
users:
- name: u
  user: {token: first}
contexts:
- name: x
  context: {cluster: c, user: u}
`
	second := `clusters:
- name: c
  cluster: {server: "https://second"}
- name: c2
  cluster: {server: "https://c2"}
users:
- name: u
  user: {token: second}
contexts:
- name: y
  context: {cluster: c2, user: u, namespace: ns2}
current-context: y
`
	writeFile(t, filepath.Join(dir, "a"), first)
	writeFile(t, filepath.Join(dir, "b"), second)
	writeFile(t, filepath.Join(dir, "home", ".kube", "config"), strings.ReplaceAll(first, "first", "home"))
	t.Setenv("HOME", filepath.Join(dir, "home"))

	t.Setenv(EnvVar, strings.Join([]string{filepath.Join(dir, "a"), filepath.Join(dir, "missing"), "", filepath.Join(dir, "b")}, string(filepath.ListSeparator)))
	cfg, err := LoadDefault("")
	if err != nil {
		t.Fatal(err)
	}
	// current-context comes from b (a has none); cluster c and user u from a.
	cc, err := cfg.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if cc.Host != "https://c2" || cc.BearerToken != "first" || cfg.Namespace("") != "ns2" {
		t.Errorf("merged: host %q token %q ns %q", cc.Host, cc.BearerToken, cfg.Namespace(""))
	}
	cc, err = cfg.ClientConfig("x")
	if err != nil || cc.Host != "https://first" {
		t.Errorf("context x: %+v %v", cc, err)
	}

	// Explicit path beats $KUBECONFIG; a missing explicit file is an error.
	cfg, err = LoadDefault(filepath.Join(dir, "b"))
	if err != nil || len(cfg.Contexts) != 1 {
		t.Errorf("explicit: %+v %v", cfg, err)
	}
	if _, err := LoadDefault(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing explicit file: %v", err)
	}

	// Without $KUBECONFIG, ~/.kube/config.
	t.Setenv(EnvVar, "")
	cfg, err = LoadDefault("")
	if err != nil {
		t.Fatal(err)
	}
	if cc, err := cfg.ClientConfig("x"); err != nil || cc.Host != "https://home" {
		t.Errorf("home config: %+v %v", cc, err)
	}

	// Nothing anywhere: an empty config that says so.
	t.Setenv("HOME", filepath.Join(dir, "nohome"))
	cfg, err = LoadDefault("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.ClientConfig(""); !errors.Is(err, ErrEmptyConfig) {
		t.Errorf("empty config: %v", err)
	}
}

func TestClientConfigErrors(t *testing.T) {
	t.Parallel()
	base := func() *Config {
		return &Config{
			Clusters: []NamedCluster{{Name: "c", Cluster: Cluster{Server: "https://s"}}},
			Users:    []NamedAuthInfo{{Name: "u", User: AuthInfo{Token: "t"}}},
			Contexts: []NamedContext{{Name: "x", Context: Context{Cluster: "c", AuthInfo: "u"}}},
		}
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		ctx    string
		want   string
	}{
		{"no context chosen", func(c *Config) {}, "", "no context chosen"},
		{"unknown context", func(c *Config) {}, "nope", "context was not found for specified context: nope"},
		{"unknown cluster", func(c *Config) { c.Contexts[0].Context.Cluster = "zz" }, "x", `cluster "zz" was not found for context "x"`},
		{"unknown user", func(c *Config) { c.Contexts[0].Context.AuthInfo = "zz" }, "x", `user "zz" was not found for context "x"`},
		{"no server", func(c *Config) { c.Clusters[0].Cluster.Server = "" }, "x", `no server found for cluster "c"`},
		{"insecure with CA", func(c *Config) {
			c.Clusters[0].Cluster.InsecureSkipTLSVerify = true
			c.Clusters[0].Cluster.CertificateAuthorityData = []byte("ca")
		}, "x", "insecure flag is not allowed"},
		{"cert without key", func(c *Config) { c.Users[0].User.ClientCertificateData = []byte("c") }, "x", "client-key-data or client-key must be specified for u"},
	}
	for _, tt := range tests {
		cfg := base()
		tt.mutate(cfg)
		_, err := cfg.ClientConfig(tt.ctx)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	cfg := base()
	cfg.Clusters[0].Cluster.InsecureSkipTLSVerify = true
	if cc, err := cfg.ClientConfig("x"); err != nil || !cc.Insecure {
		t.Errorf("explicit insecure: %+v %v", cc, err)
	}
}

// pki makes a CA, a server certificate for 127.0.0.1 and a client
// certificate for user, all PEM.
func pki(t *testing.T, user string) (caPEM []byte, server tls.Certificate, certPEM, keyPEM []byte) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "minik8s-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	sign := func(tmpl *x509.Certificate) ([]byte, []byte) {
		k := newKey()
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalECPrivateKey(k)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	}
	sc, sk := sign(&x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	server, err = tls.X509KeyPair(sc, sk)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM = sign(&x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: user, Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), server, certPEM, keyPEM
}

// TestAdminKubeconfigEndToEnd writes an admin kubeconfig, loads it back and
// talks mutual TLS to a server that requires a client certificate.
func TestAdminKubeconfigEndToEnd(t *testing.T) {
	t.Parallel()
	caPEM, serverCert, certPEM, keyPEM := pki(t, "admin")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	var seenCN string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenCN = r.TLS.PeerCertificates[0].Subject.CommonName
		w.Write([]byte(`{"major":"1"}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()

	path := filepath.Join(t.TempDir(), "sub", "admin.conf")
	if err := Write(path, NewForCluster(srv.URL, caPEM, "admin", AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}, "default")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig mode %v, %v", st.Mode(), err)
	}
	raw, _ := os.ReadFile(path)
	for _, want := range []string{"apiVersion: v1", "kind: Config", "certificate-authority-data: ", "client-certificate-data: ", "current-context: admin@minik8s"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("written kubeconfig lacks %q:\n%s", want, raw)
		}
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cfg.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(context.Background(), client.Request{Path: "/version"}); err != nil {
		t.Fatal(err)
	}
	if seenCN != "admin" {
		t.Errorf("server saw client %q", seenCN)
	}

	// A kubeconfig whose CA is not the server's must fail verification.
	otherCA, _, _, _ := pki(t, "x")
	cfg.Clusters[0].Cluster.CertificateAuthorityData = otherCA
	cc, _ = cfg.ClientConfig("")
	c, _ = client.New(cc)
	if _, err := c.Do(context.Background(), client.Request{Path: "/version"}); err == nil {
		t.Error("server with a foreign CA was trusted")
	}
}

// TestImpersonation reads a user's as, as-uid, as-groups and as-user-extra
// into the client's impersonation, as kubectl does.
func TestImpersonation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user:
    token: t
    as: bob
    as-uid: "42"
    as-groups: [qa, dev]
    as-user-extra: {scopes: [a, b]}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cfg.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	im := cc.Impersonate
	if im.UserName != "bob" || im.UID != "42" || strings.Join(im.Groups, ",") != "qa,dev" || strings.Join(im.Extra["scopes"], ",") != "a,b" {
		t.Errorf("impersonation %+v", im)
	}
}
