package pki

import (
	"bytes"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEnsureServingFirstStart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "certs")
	b, err := EnsureServing(dir, ServingOptions{
		AdvertiseAddress: net.ParseIP("192.168.56.10"),
		ExtraSANs:        []string{"api.example.com", "10.1.2.3", "*.lb.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{
		CACertFile: 0o644, CAKeyFile: 0o600,
		ServingCertFile: 0o644, ServingKeyFile: 0o600,
		AdminCertFile: 0o644, AdminKeyFile: 0o600,
	} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("cert dir mode %v, want 0700", fi.Mode().Perm())
	}
	if len(b.Written) != 6 {
		t.Errorf("Written = %q, want 6 created files", b.Written)
	}

	serving := mustParseCert(t, readFile(t, dir, ServingCertFile))
	host, _ := os.Hostname()
	wantDNS := []string{"api.example.com", "*.lb.example", "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local", strings.ToLower(host)}
	for _, n := range wantDNS {
		if !slices.Contains(serving.DNSNames, n) {
			t.Errorf("serving certificate lacks DNS name %q (has %q)", n, serving.DNSNames)
		}
	}
	for _, ip := range []string{"192.168.56.10", "10.1.2.3", "127.0.0.1", "10.96.0.1"} {
		if !slices.ContainsFunc(serving.IPAddresses, net.ParseIP(ip).Equal) {
			t.Errorf("serving certificate lacks IP %s (has %v)", ip, serving.IPAddresses)
		}
	}
	for _, name := range []string{"kubernetes.default.svc", "192.168.56.10", "127.0.0.1", "x.lb.example"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: name, Roots: b.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	if serving.Subject.CommonName != ServingCommonName || b.CA.Cert.Subject.CommonName != CACommonName {
		t.Errorf("serving CN %q, CA CN %q", serving.Subject.CommonName, b.CA.Cert.Subject.CommonName)
	}

	admin := mustParseCert(t, b.AdminCertPEM)
	if admin.Subject.CommonName != "kubernetes-admin" || !slices.Equal(admin.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("admin subject %v", admin.Subject)
	}
	if _, err := admin.Verify(x509.VerifyOptions{Roots: b.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate: %v", err)
	}
	cfg, err := b.ServerTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Certificates[0].Certificate) != 2 {
		t.Errorf("serving chain has %d certificates, want leaf and CA", len(cfg.Certificates[0].Certificate))
	}
}

func TestEnsureServingReuse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := ServingOptions{AdvertiseAddress: net.ParseIP("10.0.0.7")}
	first, err := EnsureServing(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{CACertFile, CAKeyFile, ServingCertFile, ServingKeyFile, AdminCertFile, AdminKeyFile}
	before := map[string][]byte{}
	for _, f := range files {
		before[f] = readFile(t, dir, f)
	}
	second, err := EnsureServing(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Written) != 0 {
		t.Errorf("second start wrote %q", second.Written)
	}
	for _, f := range files {
		if !bytes.Equal(before[f], readFile(t, dir, f)) {
			t.Errorf("%s changed on the second start", f)
		}
	}
	if !second.CA.Cert.Equal(first.CA.Cert) || !bytes.Equal(second.ServingCertPEM, first.ServingCertPEM) {
		t.Error("bundle differs from the first start")
	}

	// a new SAN re-issues only the serving certificate, from the same CA
	third, err := EnsureServing(dir, ServingOptions{AdvertiseAddress: net.ParseIP("10.0.0.7"), ExtraSANs: []string{"new.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(third.Written, []string{
		`apiserver.crt: re-issued, lacks subject alternative names ["new.example"]`,
		`apiserver.key: re-issued, lacks subject alternative names ["new.example"]`,
	}) {
		t.Errorf("Written = %q", third.Written)
	}
	for _, f := range []string{CACertFile, CAKeyFile, AdminCertFile, AdminKeyFile} {
		if !bytes.Equal(before[f], readFile(t, dir, f)) {
			t.Errorf("%s changed when only a SAN was added", f)
		}
	}
	c := mustParseCert(t, third.ServingCertPEM)
	if !slices.Contains(c.DNSNames, "new.example") {
		t.Errorf("re-issued certificate lacks the new SAN: %q", c.DNSNames)
	}
	if err := c.CheckSignatureFrom(first.CA.Cert); err != nil {
		t.Errorf("re-issued certificate not from the original CA: %v", err)
	}
	// dropping the extra SAN again does not re-issue: more names are fine
	fourth, err := EnsureServing(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(fourth.Written) != 0 {
		t.Errorf("fewer SANs re-issued: %q", fourth.Written)
	}
}

func TestEnsureServingRepairs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		damage     func(t *testing.T, dir string)
		wantReason string
		wantErr    string
	}{
		{name: "serving cert corrupt", damage: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ServingCertFile), []byte("garbage"), 0o644)
		}, wantReason: "apiserver.crt: re-issued, no CERTIFICATE block"},
		{name: "serving key missing", damage: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ServingKeyFile))
		}, wantReason: "apiserver.crt: created"},
		{name: "serving key from another pair", damage: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, ServingKeyFile), readFile(t, dir, AdminKeyFile), 0o600)
		}, wantReason: "apiserver.crt: re-issued, key does not match certificate"},
		{name: "serving cert from another CA", damage: func(t *testing.T, dir string) {
			other := mustCA(t)
			c, k, _ := other.IssueServing("x", []string{"localhost"}, nil, time.Hour)
			os.WriteFile(filepath.Join(dir, ServingCertFile), c, 0o644)
			os.WriteFile(filepath.Join(dir, ServingKeyFile), k, 0o600)
		}, wantReason: "apiserver.crt: re-issued, does not verify against the CA"},
		{name: "admin cert for another user", damage: func(t *testing.T, dir string) {
			ca, _ := LoadCA(filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile))
			c, k, _ := ca.IssueClient("mallory", []string{"system:masters"}, 0)
			os.WriteFile(filepath.Join(dir, AdminCertFile), c, 0o644)
			os.WriteFile(filepath.Join(dir, AdminKeyFile), k, 0o600)
		}, wantReason: `admin.crt: re-issued, is for user "mallory"`},
		{name: "admin cert close to expiry", damage: func(t *testing.T, dir string) {
			ca, _ := LoadCA(filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile))
			c, k, _ := ca.IssueClient(AdminUser, []string{MastersGroup}, 24*time.Hour)
			os.WriteFile(filepath.Join(dir, AdminCertFile), c, 0o644)
			os.WriteFile(filepath.Join(dir, AdminKeyFile), k, 0o600)
		}, wantReason: "admin.crt: re-issued, expires at"},
		{name: "CA key missing", damage: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, CAKeyFile))
		}, wantErr: "ca.crt exists but " + "%DIR%/ca.key does not"},
		{name: "CA cert missing", damage: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, CACertFile))
		}, wantErr: "ca.key exists but"},
		{name: "CA key is not the CA's", damage: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, CAKeyFile), readFile(t, dir, AdminKeyFile), 0o600)
		}, wantErr: "does not match the CA certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			first, err := EnsureServing(dir, ServingOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tc.damage(t, dir)
			b, err := EnsureServing(dir, ServingOptions{})
			if tc.wantErr != "" {
				want := strings.ReplaceAll(tc.wantErr, "%DIR%", dir)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(b.Written, func(w string) bool { return strings.HasPrefix(w, tc.wantReason) }) {
				t.Fatalf("Written = %q, want an entry starting %q", b.Written, tc.wantReason)
			}
			if !b.CA.Cert.Equal(first.CA.Cert) {
				t.Fatal("the CA changed")
			}
			// and the repaired state is stable
			again, err := EnsureServing(dir, ServingOptions{})
			if err != nil || len(again.Written) != 0 {
				t.Fatalf("third start: %q, %v", again.Written, err)
			}
		})
	}
}

func TestEnsureServingBadOptions(t *testing.T) {
	t.Parallel()
	for _, opts := range []ServingOptions{
		{ExtraSANs: []string{"not a name"}},
		{ExtraSANs: []string{"-bad.example"}},
		{AdvertiseAddress: net.IPv4zero},
	} {
		if _, err := EnsureServing(t.TempDir(), opts); err == nil {
			t.Errorf("EnsureServing(%+v): want error", opts)
		}
	}
}

func TestEnsureClientCert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := EnsureServing(dir, ServingOptions{ServiceIP: net.ParseIP("10.100.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	if c := mustParseCert(t, b.ServingCertPEM); !slices.ContainsFunc(c.IPAddresses, net.ParseIP("10.100.0.1").Equal) ||
		slices.ContainsFunc(c.IPAddresses, DefaultServiceIP.Equal) {
		t.Errorf("service IP option ignored: %v", c.IPAddresses)
	}
	for _, tc := range []struct {
		ensure func() ([]byte, []byte, error)
		file   string
		user   string
	}{
		{b.EnsureSchedulerCert, "scheduler.crt", "system:kube-scheduler"},
		{b.EnsureControllerManagerCert, "controller-manager.crt", "system:kube-controller-manager"},
	} {
		certPEM, _, err := tc.ensure()
		if err != nil {
			t.Fatal(err)
		}
		if c := mustParseCert(t, certPEM); c.Subject.CommonName != tc.user {
			t.Errorf("%s: CN %q", tc.file, c.Subject.CommonName)
		}
		if !bytes.Equal(certPEM, readFile(t, dir, tc.file)) {
			t.Errorf("%s not written", tc.file)
		}
		again, _, err := tc.ensure()
		if err != nil || !bytes.Equal(again, certPEM) {
			t.Errorf("%s re-issued on a second call: %v", tc.file, err)
		}
	}
	// groups compare as a set
	c1, _, err := b.EnsureClientCert("ops", "ops-user", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	c2, _, err := b.EnsureClientCert("ops", "ops-user", []string{"b", "a"})
	if err != nil || !bytes.Equal(c1, c2) {
		t.Errorf("reordered groups re-issued: %v", err)
	}
	c3, _, err := b.EnsureClientCert("ops", "ops-user", []string{"a"})
	if err != nil || bytes.Equal(c1, c3) {
		t.Errorf("changed groups not re-issued: %v", err)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden"} {
		if _, _, err := b.EnsureClientCert(bad, "u", nil); err == nil {
			t.Errorf("EnsureClientCert(%q): want error", bad)
		}
	}
}
