package app

import (
	"bytes"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// TestCertsCommand runs "apiserver certs" as a static-pod control plane's
// installer does: the cluster CA, serving, etcd and front-proxy PKI and the
// kubeconfigs are written; the kubelet's kubeconfig carries a certificate
// for system:node:NAME in system:nodes issued by the cluster CA; a second
// run keeps every file as it was; bad flags change nothing.
func TestCertsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certDir := filepath.Join(dir, "pki")
	kubelet := filepath.Join(dir, "kubelet.conf")
	admin := filepath.Join(dir, "admin.conf")
	args := []string{"certs", "--cert-dir", certDir, "--advertise-address", "192.0.2.10", "--tls-san", "cp.example",
		"--embedded-etcd-client-url", "https://127.0.0.1:2379", "--embedded-etcd-peer-url", "https://127.0.0.1:2380",
		"--write-kubeconfig", admin, "--node-name", "cp-1", "--kubelet-kubeconfig", kubelet}
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		rc := NewCommand().Execute(args, &out, &errOut)
		return rc, out.String() + errOut.String()
	}
	if rc, out := run(args...); rc != 0 {
		t.Fatalf("apiserver %v: exit %d\n%s", args, rc, out)
	}
	for _, f := range []string{"ca.crt", "ca.key", "apiserver.crt", "etcd/ca.crt", "etcd/server.crt", "apiserver-etcd-client.crt",
		"front-proxy-ca.crt", "scheduler.kubeconfig", "controller-manager.kubeconfig", "kube-proxy.kubeconfig"} {
		if _, err := os.Stat(filepath.Join(certDir, f)); err != nil {
			t.Errorf("after apiserver certs: %v", err)
		}
	}
	ca, err := pki.LoadCA(filepath.Join(certDir, "ca.crt"), filepath.Join(certDir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	serving, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := pki.ParseCertPEM(serving)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.VerifyHostname("cp.example"); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	if err := sc.VerifyHostname("192.0.2.10"); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	kc, err := kubeconfig.Load(kubelet)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if cc.Host != "https://192.0.2.10:6443" {
		t.Errorf("kubelet kubeconfig server %q, want https://192.0.2.10:6443", cc.Host)
	}
	cert, err := pki.ParseCertPEM(cc.CertData)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:cp-1" || strings.Join(cert.Subject.Organization, ",") != "system:nodes" {
		t.Errorf("kubelet certificate subject %v, want CN=system:node:cp-1, O=system:nodes", cert.Subject)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("kubelet certificate is not a client certificate of the cluster CA: %v", err)
	}
	if _, err := kubeconfig.Load(admin); err != nil {
		t.Errorf("admin kubeconfig: %v", err)
	}

	caBefore, _ := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	kubeletBefore, _ := os.ReadFile(kubelet)
	if rc, out := run(args...); rc != 0 {
		t.Fatalf("second apiserver certs: exit %d\n%s", rc, out)
	}
	caAfter, _ := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	kubeletAfter, _ := os.ReadFile(kubelet)
	if !bytes.Equal(caBefore, caAfter) {
		t.Error("a second apiserver certs replaced ca.crt")
	}
	if cb, _ := pki.ParseCertPEM(cc.CertData); cb == nil {
		t.Fatal("no kubelet certificate")
	}
	if !sameClientCert(t, kubeletBefore, kubeletAfter) {
		t.Error("a second apiserver certs issued the kubelet a new certificate")
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"certs", "--cert-dir", filepath.Join(dir, "x"), "--node-name", "cp-1"}, "--node-name and --kubelet-kubeconfig go together"},
		{[]string{"certs", "--cert-dir", filepath.Join(dir, "x"), "--node-name", "CP_1", "--kubelet-kubeconfig", filepath.Join(dir, "k")}, `--node-name "CP_1"`},
		{[]string{"certs", "--cert-dir", filepath.Join(dir, "x"), "--advertise-address", "cp.example"}, `--advertise-address "cp.example": not an IP address`},
	} {
		rc, out := run(tc.args...)
		if rc == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("apiserver %v: exit %d, output %q; want an error with %q", tc.args, rc, out, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
			t.Errorf("apiserver %v wrote %s", tc.args, filepath.Join(dir, "x"))
		}
	}
}

func sameClientCert(t *testing.T, a, b []byte) bool {
	t.Helper()
	var certs [2][]byte
	for i, data := range [][]byte{a, b} {
		f := filepath.Join(t.TempDir(), "k")
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
		kc, err := kubeconfig.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := kc.ClientConfig("")
		if err != nil {
			t.Fatal(err)
		}
		certs[i] = cc.CertData
	}
	return bytes.Equal(certs[0], certs[1])
}
