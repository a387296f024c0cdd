package server_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubectl-lite/remotecommand"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
)

// certHolder serves whatever certificate source it holds, so the kubelet
// server can be started before its ServingManager exists.
type certHolder struct {
	get atomic.Pointer[func(*tls.ClientHelloInfo) (*tls.Certificate, error)]
}

func (h *certHolder) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if f := h.get.Load(); f != nil {
		return (*f)(hello)
	}
	return nil, fmt.Errorf("no certificate yet")
}

func (h *certHolder) set(f func(*tls.ClientHelloInfo) (*tls.Certificate, error)) { h.get.Store(&f) }

// verifyingKubelets is the compose cluster's apiserver configuration:
// kubelets verified against the cluster CA the apiserver makes in its
// cert dir, and their own serving requests approved.
func verifyingKubelets(o *app.Options) {
	o.KubeletCertificateAuthority = filepath.Join(o.CertDir, pki.CACertFile)
	o.ApproveKubeletServingCertificates = true
}

// nodeClient is a client of node-k's kubelet (system:node:node-k).
func (e *env) nodeClient(t *testing.T) *client.Client {
	t.Helper()
	certPEM, keyPEM, err := e.s.PKI().CA.IssueClient(pki.NodeUser("node-k"), []string{pki.NodesGroup}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cc := *e.adminCC
	cc.BearerToken, cc.BearerTokenFile, cc.CertData, cc.KeyData, cc.QPS = "", "", certPEM, keyPEM, -1
	c, err := client.New(&cc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitForNode polls node-k until cond holds (the nodestatus manager's
// WaitForNode, from the apiserver).
func (e *env) waitForNode(ctx context.Context, cond func(*api.Node) bool) (*api.Node, error) {
	for {
		n, err := client.Resource[api.Node](e.admin).Get(ctx, "node-k")
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

func (e *env) exec(t *testing.T, pod string) error {
	t.Helper()
	return remotecommand.Exec(e.ctx, e.adminCC, "/api/v1/namespaces/default/pods/"+pod+"/exec",
		url.Values{"command": {"echo", "hi"}, "stdout": {"true"}}, remotecommand.Options{Stdout: io.Discard})
}

// TestKubeletServingCertificateVerified: with --kubelet-certificate-
// authority the apiserver refuses a kubelet serving its self-signed
// certificate, with kube-apiserver's answers (logs: the client's `Get
// "URL": ...` as a 500 without reason; exec: "error dialing backend: ..."),
// unless the client asks for insecureSkipTLSVerifyBackend; the kubelet's
// ServingManager files a kubelet-serving request for the Node's
// addresses, the apiserver approves and signs it, and the kubelet serves
// the issued certificate without a restart: logs and exec then work.
func TestKubeletServingCertificateVerified(t *testing.T) {
	holder := &certHolder{}
	e := setupWith(t, holder.GetCertificate, verifyingKubelets)
	web := e.pod(t, "web", "node-k", "app")
	writeCRI(t, e.logFile(web, "app", 0), "hello")
	fallback, err := bootstrap.EnsureServingCert(e.root, "node-k", []net.IP{net.ParseIP(kubeletIP)})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := bootstrap.NewServingManager(bootstrap.ServingConfig{Client: e.nodeClient(t), NodeName: "node-k", RootDir: e.root,
		WaitForNode: e.waitForNode, Fallback: fallback, RetryMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	holder.set(mgr.GetCertificate)

	// The self-signed certificate: refused.
	_, err = e.getLog(t, "web", nil)
	wantLog := fmt.Sprintf(`Get "%s/containerLogs/default/web/app": tls: failed to verify certificate: x509: certificate signed by unknown authority`, e.kubelet)
	var se *apierrors.StatusError
	if !apierrors.IsInternalError(err) || !errors.As(err, &se) || se.ErrStatus.Message != wantLog || se.ErrStatus.Reason != "" {
		t.Errorf("logs from a kubelet with a self-signed certificate: %#v\nwant the message %q", err, wantLog)
	}
	if err := e.exec(t, "web"); err == nil || !strings.Contains(err.Error(),
		"error dialing backend: tls: failed to verify certificate: x509: certificate signed by unknown authority") {
		t.Errorf("exec on a kubelet with a self-signed certificate: %v", err)
	}
	if got, err := e.getLog(t, "web", url.Values{"insecureSkipTLSVerifyBackend": {"true"}}); err != nil || got != "hello\n" {
		t.Errorf("logs with insecureSkipTLSVerifyBackend: %q, %v", got, err)
	}

	// The issued certificate, once the kubelet has it.
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for !mgr.Issued() {
		select {
		case <-e.ctx.Done():
			t.Fatal("no serving certificate issued")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if got, err := e.getLog(t, "web", nil); err != nil || got != "hello\n" {
		t.Errorf("logs from a kubelet with its issued certificate: %q, %v", got, err)
	}
	if err := e.exec(t, "web"); err != nil {
		t.Errorf("exec on a kubelet with its issued certificate: %v", err)
	}
	leaf, err := mgr.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cn := leaf.Leaf.Subject.CommonName; cn != "system:node:node-k" || fmt.Sprint(leaf.Leaf.DNSNames, leaf.Leaf.IPAddresses) != "[node-k.invalid] ["+kubeletIP+"]" {
		t.Errorf("issued certificate: CN %s, DNS %v, IP %v", cn, leaf.Leaf.DNSNames, leaf.Leaf.IPAddresses)
	}
	list, err := client.Resource[api.CertificateSigningRequest](e.admin).List(e.ctx, client.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Spec.SignerName != api.KubeletServingSignerName || list.Items[0].Spec.Username != "system:node:node-k" ||
		len(list.Items[0].Status.Conditions) != 1 || list.Items[0].Status.Conditions[0].Reason != "AutoApproved" {
		t.Errorf("certificate signing requests: %+v", list.Items)
	}

	// A new address: a new certificate for it, served without a restart.
	n, err := client.Resource[api.Node](e.admin).Get(e.ctx, "node-k")
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Addresses = append(n.Status.Addresses, api.NodeAddress{Type: api.NodeExternalIP, Address: "192.0.2.7"})
	if _, err := client.Resource[api.Node](e.admin).UpdateStatus(e.ctx, n); err != nil {
		t.Fatal(err)
	}
	for {
		c, _ := mgr.GetCertificate(nil)
		if len(c.Leaf.IPAddresses) == 2 {
			break
		}
		select {
		case <-e.ctx.Done():
			t.Fatalf("no certificate for the new address: %v", c.Leaf.IPAddresses)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if got, err := e.getLog(t, "web", nil); err != nil || got != "hello\n" {
		t.Errorf("logs after the rotation: %q, %v", got, err)
	}
}

// TestKubeletServingCertificateWrongAddress: a certificate of the cluster
// CA that is not valid for the address the apiserver dials is refused.
func TestKubeletServingCertificateWrongAddress(t *testing.T) {
	holder := &certHolder{}
	e := setupWith(t, holder.GetCertificate, verifyingKubelets)
	certPEM, keyPEM, err := e.s.PKI().CA.IssueServing("node-k", []string{"node-k.invalid"}, []net.IP{net.ParseIP("127.0.0.3")}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	holder.set(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &c, nil })
	e.pod(t, "web", "node-k", "app")
	_, err = e.getLog(t, "web", nil)
	want := fmt.Sprintf(`Get "%s/containerLogs/default/web/app": tls: failed to verify certificate: x509: certificate is valid for 127.0.0.3, not 127.0.0.2`, e.kubelet)
	if err == nil || err.Error() != want {
		t.Errorf("logs from a kubelet whose certificate names another address: %v\nwant %s", err, want)
	}
	if err := e.exec(t, "web"); err == nil || !strings.Contains(err.Error(), "error dialing backend: tls: failed to verify certificate: x509: certificate is valid for 127.0.0.3, not 127.0.0.2") {
		t.Errorf("exec: %v", err)
	}
}
