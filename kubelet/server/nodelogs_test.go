package server_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
	"github.com/minik8s/minik8s/kubelet/server"
)

// TestNodeLogs: /logs/ serves the node's log directory as files, as the
// kubelet's log server does (what the apiserver's nodes/NAME/proxy/logs/
// reaches), authorized as get nodes/log.
func TestNodeLogs(t *testing.T) {
	ca, err := pki.NewCA("cluster", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bootstrap.EnsureServingCert(t.TempDir(), "node-l", []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "syslog"), []byte("node booted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	authz := &recordingAuthorizer{allowed: []string{"log-reader"}}
	srv, err := server.New(server.Config{Certificate: cert, ClientCAs: ca.Pool(), Pods: &podSet{m: nil}, Authorizer: authz, NodeLogsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); <-done })
	get := func(user, path string) (int, string) {
		t.Helper()
		c, k, err := ca.IssueClient(user, nil, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}}}} //nolint:gosec // the kubelet's self-signed certificate
		resp, err := hc.Get("https://" + l.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("log-reader", "/logs/"); code != http.StatusOK || !strings.Contains(body, `<a href="syslog">syslog</a>`) {
		t.Errorf("GET /logs/: %d %q", code, body)
	}
	if code, body := get("log-reader", "/logs/syslog"); code != http.StatusOK || body != "node booted\n" {
		t.Errorf("GET /logs/syslog: %d %q", code, body)
	}
	if code, _ := get("mallory", "/logs/syslog"); code != http.StatusForbidden {
		t.Errorf("GET /logs/syslog as mallory: %d, want 403", code)
	}
	authz.mu.Lock()
	defer authz.mu.Unlock()
	if want := "log-reader get nodes/log,log-reader get nodes/log,mallory get nodes/log"; strings.Join(authz.asked, ",") != want {
		t.Errorf("the authorizer was asked %q, want %q", authz.asked, want)
	}
}
