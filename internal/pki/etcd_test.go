package pki

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestEnsureEtcdLayoutAndReuse(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pki")
	cluster, err := EnsureServing(dir, ServingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := EnsureEtcd(dir, EtcdOptions{IPs: []net.IP{net.ParseIP("192.168.56.10"), net.IPv4zero}})
	if err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{
		EtcdCACertFile: 0o644, EtcdCAKeyFile: 0o600,
		EtcdServerCertFile: 0o644, EtcdServerKeyFile: 0o600,
		EtcdPeerCertFile: 0o644, EtcdPeerKeyFile: 0o600,
		EtcdHealthcheckClientCertFile: 0o644, EtcdHealthcheckClientKeyFile: 0o600,
		APIServerEtcdClientCertFile: 0o644, APIServerEtcdClientKeyFile: 0o600,
	} {
		fi, err := os.Stat(b.Path(name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, EtcdDir)); fi.Mode().Perm() != 0o700 {
		t.Errorf("etcd dir mode %v, want 0700", fi.Mode().Perm())
	}
	if len(b.Written) != 10 {
		t.Errorf("Written = %q, want 10 created files", b.Written)
	}
	if b.CA.Cert.Subject.CommonName != EtcdCACommonName || b.CA.Cert.Equal(cluster.CA.Cert) {
		t.Fatalf("etcd CA %q must be its own CA named %q", b.CA.Cert.Subject.CommonName, EtcdCACommonName)
	}

	for _, name := range []string{EtcdServerCertFile, EtcdPeerCertFile} {
		c := mustParseCert(t, readFile(t, dir, name))
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := c.Verify(x509.VerifyOptions{Roots: b.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Errorf("%s: usage %v: %v", name, usage, err)
			}
		}
		for _, ip := range []string{"127.0.0.1", "::1", "192.168.56.10"} {
			if !slices.ContainsFunc(c.IPAddresses, net.ParseIP(ip).Equal) {
				t.Errorf("%s lacks IP %s (has %v)", name, ip, c.IPAddresses)
			}
		}
		if slices.ContainsFunc(c.IPAddresses, net.IP.IsUnspecified) {
			t.Errorf("%s names an unspecified address: %v", name, c.IPAddresses)
		}
		if !slices.Contains(c.DNSNames, "localhost") {
			t.Errorf("%s lacks localhost (has %q)", name, c.DNSNames)
		}
	}
	for name, user := range map[string]string{EtcdHealthcheckClientCertFile: EtcdHealthcheckClientUser, APIServerEtcdClientCertFile: APIServerEtcdClientUser} {
		c := mustParseCert(t, readFile(t, dir, name))
		if c.Subject.CommonName != user {
			t.Errorf("%s: CN %q, want %q", name, c.Subject.CommonName, user)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: b.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: cluster.CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
			t.Errorf("%s verifies against the cluster CA; only the etcd CA may issue etcd credentials", name)
		}
	}

	// A restart reuses everything.
	again, err := EnsureEtcd(dir, EtcdOptions{IPs: []net.IP{net.ParseIP("192.168.56.10")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Written) != 0 || !again.CA.Cert.Equal(b.CA.Cert) {
		t.Fatalf("second start wrote %q (CA reused: %v)", again.Written, again.CA.Cert.Equal(b.CA.Cert))
	}
	// A new address re-issues the member's certificates only.
	moved, err := EnsureEtcd(dir, EtcdOptions{IPs: []net.IP{net.ParseIP("10.0.0.7")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"etcd/server.crt: re-issued", "etcd/server.key: re-issued", "etcd/peer.crt: re-issued", "etcd/peer.key: re-issued"}
	if len(moved.Written) != len(want) {
		t.Fatalf("new address wrote %q, want server and peer pairs", moved.Written)
	}
	for i, w := range want {
		if len(moved.Written[i]) < len(w) || moved.Written[i][:len(w)] != w {
			t.Errorf("Written[%d] = %q, want %q...", i, moved.Written[i], w)
		}
	}
}

func TestEnsureEtcdRefusesHalfCA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := EnsureEtcd(dir, EtcdOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, EtcdCAKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureEtcd(dir, EtcdOptions{}); err == nil {
		t.Fatal("etcd/ca.crt without etcd/ca.key accepted; a new CA would silently lock out every etcd client")
	}
}
