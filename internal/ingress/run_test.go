package ingress_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/ingress"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// TestBadFlags: each wrong command line exits 2 with one line naming the
// flag at fault.
func TestBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--http-port=0"}, "--http-port"},
		{[]string{"--https-port=70000"}, "--https-port"},
		{[]string{"--secure-port=-1"}, "--secure-port"},
		{[]string{"--secure-port=8080", "--http-port=8080"}, "--secure-port 8080"},
		{[]string{"--bind-address=nowhere"}, "--bind-address"},
		{[]string{"--health-port=10254"}, "--health-port"},
		{[]string{"--http-port=8443", "--https-port=8443"}, "--http-port and --https-port"},
		{[]string{"--controller-class=nodomain"}, "--controller-class"},
		{[]string{"--controller-class=example.com/"}, "--controller-class"},
		{[]string{"--ingress-class=Bad_Name"}, "--ingress-class"},
		{[]string{"--publish-address=not an address"}, "--publish-address"},
		{[]string{"--http-port=eighty"}, "--http-port"},
		{[]string{"--no-such-flag"}, "--no-such-flag"},
	} {
		var stdout, stderr bytes.Buffer
		code := ingress.NewCommand().Execute(tt.args, &stdout, &stderr)
		msg := stderr.String()
		if code != daemon.ExitUsage || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "ingress-controller: ") || !strings.Contains(msg, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %s", tt.args, code, msg, tt.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := ingress.NewCommand().Execute([]string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, stderr.String())
	}
	for _, f := range []string{"--kubeconfig", "--http-port", "--https-port", "--secure-port", "--authentication-kubeconfig", "--authorization-kubeconfig", "--controller-class", "--ingress-class", "--publish-address"} {
		if !strings.Contains(stdout.String(), f) {
			t.Errorf("--help lacks %s", f)
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRun runs the daemon as its main does, on a kubeconfig, and reads its
// secure port: the health paths answer anyone, /metrics only a user the
// apiserver authorizes (the admin's client certificate, its CA looked up
// in kube-system/extension-apiserver-authentication), and counts the 404
// of a request to no Ingress.
func TestRun(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	o := ingress.DefaultOptions()
	o.Client.Kubeconfig = s.Options.WriteKubeconfig
	o.HTTPPort, o.HTTPSPort = freePort(t), freePort(t)
	o.Serving.BindAddress, o.Serving.SecurePort = "127.0.0.1", freePort(t)
	o.Serving.Authentication.Kubeconfig = s.Options.WriteKubeconfig
	o.Serving.Authorization.Kubeconfig = s.Options.WriteKubeconfig
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingress.Run(ctx, o, apiservertest.Logger()) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	}()
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatalf("admin client certificate: %v", err)
	}
	anonymous := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	adminClient := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{admin}}}}
	get := func(hc *http.Client, url string) (int, string, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	secure := "https://127.0.0.1:" + strconv.Itoa(o.Serving.SecurePort)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := get(anonymous, secure+"/readyz")
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never ready: %d %v", code, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body, err := get(anonymous, secure+"/healthz"); err != nil || code != 200 || body != "ok" {
		t.Errorf("/healthz: %d %q %v", code, body, err)
	}
	if code, _, err := get(anonymous, "http://127.0.0.1:"+strconv.Itoa(o.HTTPPort)+"/"); err != nil || code != 404 {
		t.Errorf("HTTP with no Ingress: %d %v, want 404", code, err)
	}
	if code, body, err := get(anonymous, secure+"/metrics"); err != nil || code != 403 || !strings.Contains(body, `cannot get path \"/metrics\"`) {
		t.Errorf("anonymous /metrics: %d %v %q, want 403 naming the path", code, err, body)
	}
	// The client CA is looked up at start; the admin's certificate
	// authenticates once it has been.
	var code int
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, body, err = get(adminClient, secure+"/metrics")
		if (err == nil && code == 200) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || code != 200 || !strings.Contains(body, `ingress_controller_requests_total{ingress="",namespace="",service="",status="404"} 1`) {
		t.Errorf("admin /metrics: %d %v, lacks the 404 counted:\n%s", code, err, body)
	}
}
