package bootstrap_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
)

func adminClient(t *testing.T, s *apiservertest.Server) *client.Client {
	t.Helper()
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cc.QPS = -1
	c, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newToken(t *testing.T, ctx context.Context, admin *client.Client) string {
	t.Helper()
	id, secret := pki.GenerateBootstrapToken()
	sec, err := pki.BootstrapTokenSecret(id, secret, time.Hour, []string{pki.BootstrapDefaultNodeGroup}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.Secret](admin).Namespace("kube-system").Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	return id + "." + secret
}

func TestJoinWithTokenThenReuse(t *testing.T) {
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := adminClient(t, s)
	token := newToken(t, ctx, admin)
	root := t.TempDir()
	cfg := bootstrap.Config{
		Kubeconfig: filepath.Join(root, "kubelet.kubeconfig"), RootDir: root, NodeName: "node-j",
		Server: s.SecureURL(), Token: token, CACertHash: s.PKI().CA.Hash(), Logger: apiservertest.Logger(),
	}

	// A wrong CA hash is refused before anything is sent.
	bad := cfg
	bad.CACertHash = "sha256:" + "00000000000000000000000000000000000000000000000000000000000000ff"
	if _, err := bootstrap.LoadOrJoin(ctx, bad); err == nil {
		t.Fatal("join with a wrong CA hash succeeded")
	}

	j, err := bootstrap.LoadOrJoin(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !j.Joined {
		t.Error("first start did not join")
	}
	// The certificate is the node's identity.
	cert, err := pki.ParseCertPEM(j.Client.CertData)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:node-j" || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "system:nodes" {
		t.Errorf("certificate subject = %v", cert.Subject)
	}
	if fi, err := os.Lstat(filepath.Join(root, "pki", bootstrap.ClientCurrentFile)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("pki/%s: %v %v", bootstrap.ClientCurrentFile, fi, err)
	}
	// It works: the node registers itself, and cannot touch another node.
	c, err := client.New(j.Client)
	if err != nil {
		t.Fatal(err)
	}
	nodes := client.Resource[api.Node](c)
	if _, err := nodes.Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-j"}}); err != nil {
		t.Fatalf("node-j registers itself: %v", err)
	}
	if _, err := nodes.Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-other"}}); !apierrors.IsForbidden(err) {
		t.Fatalf("node-j creating node-other: %v, want Forbidden", err)
	}

	// Second start: the kubeconfig is used as it is, no new CSR.
	csrsBefore, err := client.Resource[api.CertificateSigningRequest](admin).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := cfg
	cfg2.Token = "" // the token may be gone by now: it is not needed
	j2, err := bootstrap.LoadOrJoin(ctx, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if j2.Joined || string(j2.Client.CertData) != string(j.Client.CertData) || string(j2.CAData) != string(s.PKI().CA.CertPEM()) {
		t.Errorf("second start joined again (%v) or got other credentials", j2.Joined)
	}
	csrsAfter, err := client.Resource[api.CertificateSigningRequest](admin).List(ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(csrsAfter.Items) != len(csrsBefore.Items) {
		t.Errorf("CSRs %d -> %d on a restart", len(csrsBefore.Items), len(csrsAfter.Items))
	}
}

func TestJoinWithBootstrapKubeconfig(t *testing.T) {
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	token := newToken(t, ctx, adminClient(t, s))
	root := t.TempDir()
	bk := filepath.Join(root, "bootstrap-kubelet.kubeconfig")
	if err := kubeconfig.Write(bk, kubeconfig.NewForCluster(s.SecureURL(), s.PKI().CA.CertPEM(), "kubelet-bootstrap",
		kubeconfig.AuthInfo{Token: token}, "")); err != nil {
		t.Fatal(err)
	}
	j, err := bootstrap.LoadOrJoin(ctx, bootstrap.Config{Kubeconfig: filepath.Join(root, "kubelet.kubeconfig"),
		BootstrapKubeconfig: bk, RootDir: root, NodeName: "node-b", Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(j.Client)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.Node](c).Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-b"}}); err != nil {
		t.Fatalf("node-b registers itself: %v", err)
	}
}

func TestLoadOrJoinNeedsCredentials(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	_, err := bootstrap.LoadOrJoin(context.Background(), bootstrap.Config{Kubeconfig: filepath.Join(root, "missing"), RootDir: root, NodeName: "n"})
	if err == nil {
		t.Fatal("no kubeconfig and nothing to join with: no error")
	}
}

func TestEnsureServingCert(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ip := net.ParseIP("10.0.0.9")
	c1, err := bootstrap.EnsureServingCert(root, "node-s", []net.IP{ip})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c1.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.VerifyHostname("node-s") != nil || leaf.VerifyHostname("10.0.0.9") != nil || leaf.IsCA {
		t.Errorf("serving certificate names %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
	if len(leaf.ExtKeyUsage) != 1 || leaf.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
		t.Errorf("ext key usage %v", leaf.ExtKeyUsage)
	}
	// Reused while it fits; replaced when the node's IP changes.
	c2, err := bootstrap.EnsureServingCert(root, "node-s", []net.IP{ip})
	if err != nil || string(c2.Certificate[0]) != string(c1.Certificate[0]) {
		t.Errorf("not reused: %v", err)
	}
	c3, err := bootstrap.EnsureServingCert(root, "node-s", []net.IP{net.ParseIP("10.0.0.10")})
	if err != nil || string(c3.Certificate[0]) == string(c1.Certificate[0]) {
		t.Errorf("not replaced for a new IP: %v", err)
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(root, "pki", bootstrap.ServingCertFile), filepath.Join(root, "pki", bootstrap.ServingKeyFile)); err != nil {
		t.Errorf("files: %v", err)
	}
}
