package bootstrap_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
)

// servingEnv is an apiserver approving kubelet serving requests, node-s
// registered with addresses, and what a ServingManager for it needs.
type servingEnv struct {
	s     *apiservertest.Server
	admin *client.Client
	cfg   bootstrap.ServingConfig
	ctx   context.Context
}

func newServingEnv(t *testing.T, approve bool) *servingEnv {
	t.Helper()
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.ApproveKubeletServingCertificates = approve })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	admin := adminClient(t, s)
	n, err := client.Resource[api.Node](admin).Create(ctx, &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-s"}})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = []api.NodeAddress{{Type: api.NodeInternalIP, Address: "10.1.2.3"}, {Type: api.NodeHostName, Address: "node-s"}}
	if _, err := client.Resource[api.Node](admin).UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := s.PKI().CA.IssueClient(pki.NodeUser("node-s"), []string{pki.NodesGroup}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := client.New(&client.Config{Host: s.SecureURL(), CAData: s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	fallback, err := bootstrap.EnsureServingCert(root, "node-s", []net.IP{net.ParseIP("10.1.2.3")})
	if err != nil {
		t.Fatal(err)
	}
	waitForNode := func(ctx context.Context, cond func(*api.Node) bool) (*api.Node, error) {
		for {
			n, err := client.Resource[api.Node](admin).Get(ctx, "node-s")
			if err == nil && cond(n) {
				return n, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return &servingEnv{s: s, admin: admin, ctx: ctx, cfg: bootstrap.ServingConfig{Client: nc, NodeName: "node-s", RootDir: root,
		WaitForNode: waitForNode, Fallback: fallback, RetryMax: time.Second, Logger: apiservertest.Logger()}}
}

// run runs m until the test ends.
func (e *servingEnv) run(t *testing.T, m *bootstrap.ServingManager) {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// current is the certificate m serves.
func current(t *testing.T, m *bootstrap.ServingManager) *x509.Certificate {
	t.Helper()
	c, err := m.GetCertificate(nil)
	if err != nil || c == nil || c.Leaf == nil {
		t.Fatalf("GetCertificate: %v %v", c, err)
	}
	return c.Leaf
}

func (e *servingEnv) csrCount(t *testing.T) int {
	t.Helper()
	l, err := client.Resource[api.CertificateSigningRequest](e.admin).List(e.ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items)
}

func (e *servingEnv) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-e.ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestServingCertificateRenewedBeforeExpiry: a serving certificate found
// on disk past its renewal point (70-90 % of its lifetime: 9 of its 10
// minutes are gone) is served at once and replaced by a new one from the
// apiserver before it expires; a kubelet restarted with a fresh one on
// disk serves it and files no request.
func TestServingCertificateRenewedBeforeExpiry(t *testing.T) {
	e := newServingEnv(t, true)
	// An "issued" certificate of another CA, about to expire.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "system:node:node-s", Organization: []string{"system:nodes"}},
		DNSNames: []string{"node-s"}, IPAddresses: []net.IP{net.ParseIP("10.1.2.3")}, NotBefore: now.Add(-9 * time.Minute), NotAfter: now.Add(time.Minute),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := pki.EncodeKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.cfg.RootDir, "pki")
	old := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM...)
	if err := os.WriteFile(filepath.Join(dir, "kubelet-server-old.pem"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("kubelet-server-old.pem", filepath.Join(dir, bootstrap.ServingCurrentFile)); err != nil {
		t.Fatal(err)
	}
	m, err := bootstrap.NewServingManager(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Issued() || current(t, m).SerialNumber.Int64() != 7 {
		t.Fatalf("the certificate on disk is not served: issued %v, serial %v", m.Issued(), current(t, m).SerialNumber)
	}
	e.run(t, m)
	e.eventually(t, "a renewed certificate", func() bool { return current(t, m).SerialNumber.Int64() != 7 })
	renewed := current(t, m)
	if renewed.NotAfter.Sub(now) < 24*time.Hour {
		t.Errorf("renewed certificate expires at %v", renewed.NotAfter)
	}
	if _, err := renewed.Verify(x509.VerifyOptions{Roots: e.s.PKI().CA.Pool(), DNSName: "node-s"}); err != nil {
		t.Errorf("renewed certificate does not verify against the cluster CA: %v", err)
	}
	if n := e.csrCount(t); n != 1 {
		t.Errorf("%d certificate signing requests, want 1", n)
	}

	// Restarted: the renewed certificate is on disk and good for months.
	m2, err := bootstrap.NewServingManager(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !m2.Issued() || current(t, m2).SerialNumber.Cmp(renewed.SerialNumber) != 0 {
		t.Fatalf("restart: serving %v (issued %v), want the renewed certificate", current(t, m2).SerialNumber, m2.Issued())
	}
	e.run(t, m2)
	time.Sleep(500 * time.Millisecond)
	if n := e.csrCount(t); n != 1 {
		t.Errorf("after a restart: %d certificate signing requests, want still 1", n)
	}
}

// TestServingCertificateDeniedThenRetried: with no approver (Kubernetes'
// default) an administrator denies the node's request: the fallback is
// still served, a new request is filed after a back-off, and once that one
// is approved its certificate is served.
func TestServingCertificateDeniedThenRetried(t *testing.T) {
	e2 := newServingEnv(t, false)
	m, err := bootstrap.NewServingManager(e2.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e2.run(t, m)
	csrs := client.Resource[api.CertificateSigningRequest](e2.admin)
	var first api.CertificateSigningRequest
	e2.eventually(t, "a serving request", func() bool {
		l, err := csrs.List(e2.ctx, client.ListOptions{})
		if err != nil || len(l.Items) == 0 {
			return false
		}
		first = l.Items[0]
		return true
	})
	first.Status.Conditions = append(first.Status.Conditions, api.CertificateSigningRequestCondition{
		Type: api.CertificateDenied, Status: api.ConditionTrue, Reason: "ByTest", Message: "no"})
	if err := csrs.Subresource(first.Name, "approval").Put(e2.ctx, &first, nil); err != nil {
		t.Fatal(err)
	}
	var second api.CertificateSigningRequest
	e2.eventually(t, "a second request", func() bool {
		l, err := csrs.List(e2.ctx, client.ListOptions{})
		for _, c := range l.Items {
			if err == nil && c.Name != first.Name {
				second = c
				return true
			}
		}
		return false
	})
	if m.Issued() {
		t.Error("a certificate is served though the request was denied")
	}
	second.Status.Conditions = append(second.Status.Conditions, api.CertificateSigningRequestCondition{
		Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "ByTest", Message: "yes"})
	if err := csrs.Subresource(second.Name, "approval").Put(e2.ctx, &second, nil); err != nil {
		t.Fatal(err)
	}
	e2.eventually(t, "the certificate of the approved request", m.Issued)
}
