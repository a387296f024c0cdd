package realcomponents

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/pki"
)

// fakeKubelet is an HTTPS server on loopback standing in for a kubelet:
// it serves whichever certificate the test sets and answers every
// containerLogs request with "hello".
type fakeKubelet struct {
	port int
	cert atomic.Pointer[tls.Certificate]
}

func startFakeKubelet(t *testing.T) *fakeKubelet {
	t.Helper()
	k := &fakeKubelet{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k.port = l.Addr().(*net.TCPAddr).Port
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/containerLogs/") {
				io.WriteString(w, "hello\n")
				return
			}
			http.Error(w, "not served by the fake kubelet", http.StatusNotFound)
		}),
		TLSConfig: &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return k.cert.Load(), nil },
			NextProtos: []string{"http/1.1"}},
		ReadHeaderTimeout: 10 * time.Second,
		// The refused handshakes are the test's point, not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return k
}

// serve makes the fake kubelet serve a certificate of ca for ips.
func (k *fakeKubelet) serve(t *testing.T, ca *pki.CA, ips ...string) {
	t.Helper()
	var addrs []net.IP
	for _, ip := range ips {
		addrs = append(addrs, net.ParseIP(ip))
	}
	certPEM, keyPEM, err := ca.IssueServing("system:node:n1", nil, addrs, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(append(certPEM, ca.CertPEM()...), keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	k.cert.Store(&c)
}

// spdyExec sends an exec request upgrading to SPDY, as kubectl exec
// does, and returns the answer's code and body.
func spdyExec(e *endpoint, path string) (int, map[string]any, error) {
	req, err := http.NewRequest("POST", e.base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	req.Header.Set("X-Stream-Protocol-Version", "v4.channel.k8s.io")
	resp, err := e.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		out = map[string]any{"text": string(b)}
	}
	return resp.StatusCode, out, nil
}

// TestKubeletCertificateAuthorityAsKube starts kube-apiserver v1.37 and
// minik8s with --kubelet-certificate-authority and a Node whose kubelet
// (a fake one) serves, in turn, a certificate of another CA, one of the
// CA for another address, and one of the CA for its address, and
// compares the answers to pods/log (plain and with
// insecureSkipTLSVerifyBackend) and to a SPDY pods/exec word for word:
// the refusals are kube's 500s naming the x509 error, the valid
// certificate is served.
func TestKubeletCertificateAuthorityAsKube(t *testing.T) {
	kubeletCA, err := pki.NewCA("kubelet-ca", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "kubelet-ca.crt")
	if err := os.WriteFile(caFile, kubeletCA.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	kube := startKubeAPIServer(t, "--kubelet-certificate-authority="+caFile)
	s := apiservertest.Start(t, func(o *app.Options) { o.KubeletCertificateAuthority = caFile })
	both := apiservers{kube: kube.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}}
	kubelet := startFakeKubelet(t)

	both.must(t, 201, "POST", "/api/v1/nodes", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}`)
	both.must(t, 200, "PATCH", "/api/v1/nodes/n1/status", fmt.Sprintf(
		`{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":%d}}}}`, kubelet.port))
	both.must(t, 201, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"default"}}`)
	both.must(t, 201, "POST", "/api/v1/namespaces/default/pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},
		"spec":{"nodeName":"n1","automountServiceAccountToken":false,"containers":[{"name":"app","image":"busybox"}]}}`)

	const (
		logs     = "/api/v1/namespaces/default/pods/web/log"
		insecure = logs + "?insecureSkipTLSVerifyBackend=true"
		exec     = "/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true"
	)
	sameExec := func(t *testing.T, want string) {
		t.Helper()
		kc, kb, err := spdyExec(both.kube, exec)
		if err != nil {
			t.Fatal(err)
		}
		oc, ob, err := spdyExec(both.ours, exec)
		if err != nil {
			t.Fatal(err)
		}
		if kc != oc || !reflect.DeepEqual(kb, ob) {
			t.Errorf("exec:\nkube-apiserver %d %v\nminik8s        %d %v", kc, kb, oc, ob)
		}
		if msg, _ := kb["message"].(string); kc != 500 || !strings.Contains(msg, want) {
			t.Errorf("kube-apiserver's exec answer %d %q does not say %q", kc, msg, want)
		}
	}
	other, err := pki.NewCA("another-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("another CA", func(t *testing.T) {
		kubelet.serve(t, other, "127.0.0.1")
		both.sameAnswer(t, 500, "GET", logs, "")
		both.sameAnswer(t, 200, "GET", insecure, "")
		sameExec(t, "error dialing backend: tls: failed to verify certificate: x509: certificate signed by unknown authority")
	})
	t.Run("another address", func(t *testing.T) {
		kubelet.serve(t, kubeletCA, "127.0.0.2")
		both.sameAnswer(t, 500, "GET", logs, "")
		sameExec(t, "x509: certificate is valid for 127.0.0.2, not 127.0.0.1")
	})
	t.Run("its address", func(t *testing.T) {
		kubelet.serve(t, kubeletCA, "127.0.0.1")
		both.sameAnswer(t, 200, "GET", logs, "")
	})
}
