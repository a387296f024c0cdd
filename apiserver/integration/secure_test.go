package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// tlsClient returns an HTTPS client trusting the cluster CA, presenting cert if given.
func tlsClient(t *testing.T, caPEM []byte, cert *tls.Certificate) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("bad CA PEM")
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
}

func get(t *testing.T, hc *http.Client, url string, hdr ...string) (int, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil
}

func TestTLSAndAuthentication(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte("s3cr3t-static-token,alice,uid-1,\"dev,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.TokenAuthFile = tokenFile })
	base := s.SecureURL()
	ca := s.PKI().CA.CertPEM()
	anon := tlsClient(t, ca, nil)

	// Health and version are open; everything else needs credentials.
	for _, p := range []string{"/healthz", "/readyz", "/livez", "/version"} {
		if code, body, err := get(t, anon, base+p); err != nil || code != 200 {
			t.Fatalf("anonymous %s: %d %s %v", p, code, body, err)
		}
	}
	code, body, err := get(t, anon, base+"/api/v1/namespaces")
	if err != nil || code != 401 {
		t.Fatalf("anonymous list: %d %s %v", code, body, err)
	}
	var st api.Status
	if json.Unmarshal(body, &st) != nil || st.Kind != "Status" || st.Reason != api.StatusReasonUnauthorized {
		t.Fatalf("401 body = %s", body)
	}

	// The written admin kubeconfig verifies the server against the CA and works.
	kc, err := kubeconfig.Load(s.Options.WriteKubeconfig)
	if err != nil {
		t.Fatalf("load admin kubeconfig: %v", err)
	}
	cc, err := kc.ClientConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if cc.Insecure {
		t.Fatal("admin kubeconfig skips TLS verification")
	}
	c, err := client.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	nss, err := client.Resource[api.Namespace](c).List(context.Background(), client.ListOptions{})
	if err != nil || len(nss.Items) < 4 {
		t.Fatalf("admin list namespaces: %v", err)
	}

	// The scheduler's kubeconfig carries its own identity.
	skc, err := kubeconfig.Load(filepath.Join(s.Options.CertDir, "scheduler.kubeconfig"))
	if err != nil {
		t.Fatalf("scheduler kubeconfig: %v", err)
	}
	scc, _ := skc.ClientConfig("")
	sc, err := client.New(scc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.Pod](sc).List(context.Background(), client.ListOptions{}); err != nil {
		t.Fatalf("scheduler lists pods: %v", err)
	}
	if _, err := client.Resource[api.Secret](sc).Namespace("kube-system").List(context.Background(), client.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("scheduler lists secrets: %v, want Forbidden", err)
	}

	// Plain HTTP to the TLS port is refused.
	plainURL := "http://" + strings.TrimPrefix(base, "https://") + "/api/v1/namespaces"
	if code, _, err := get(t, &http.Client{Timeout: 5 * time.Second}, plainURL); err == nil && code != 400 {
		t.Fatalf("plain HTTP to the TLS port: %d", code)
	}

	// A client certificate from another CA is refused: at the handshake, or as anonymous.
	otherCA, err := pki.NewCA("kubernetes", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := otherCA.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, err := get(t, tlsClient(t, ca, &foreign), base+"/api/v1/namespaces"); err == nil && code != 401 {
		t.Fatalf("foreign-CA client cert: %d", code)
	}
	// A client that does not trust the cluster CA cannot talk to it.
	if _, _, err := get(t, &http.Client{Timeout: 5 * time.Second}, base+"/healthz"); err == nil {
		t.Fatal("a client without the cluster CA verified the server")
	}

	// Static tokens authenticate (alice has no roles yet: 403, not 401); unknown ones are 401.
	if code, body, _ := get(t, anon, base+"/api/v1/namespaces", "Authorization", "Bearer s3cr3t-static-token"); code != 403 ||
		!strings.Contains(string(body), `User \"alice\" cannot list resource \"namespaces\"`) {
		t.Fatalf("static token: %d %s", code, body)
	}
	if code, _, _ := get(t, anon, base+"/api/v1/namespaces", "Authorization", "Bearer nope"); code != 401 {
		t.Fatalf("unknown token: %d", code)
	}

	// Bootstrap tokens: valid works, expired and unknown are 401.
	secrets := client.Resource[api.Secret](c).Namespace("kube-system")
	id, secret := pki.GenerateBootstrapToken()
	sec, err := pki.BootstrapTokenSecret(id, secret, time.Hour, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Create(context.Background(), sec); err != nil {
		t.Fatalf("create bootstrap secret: %v", err)
	}
	eid, esecret := pki.GenerateBootstrapToken()
	expired, _ := pki.BootstrapTokenSecret(eid, esecret, time.Hour, nil, time.Now().Add(-2*time.Hour))
	if _, err := secrets.Create(context.Background(), expired); err != nil {
		t.Fatalf("create expired secret: %v", err)
	}
	// A bootstrap token authenticates as system:bootstrap:ID, which may only
	// file certificate signing requests.
	waitFor(t, 5*time.Second, func() bool {
		code, _, _ := get(t, anon, base+"/apis/certificates.k8s.io/v1/certificatesigningrequests", "Authorization", "Bearer "+id+"."+secret)
		return code == 200
	})
	if code, body, _ := get(t, anon, base+"/api/v1/namespaces/kube-system/secrets", "Authorization", "Bearer "+id+"."+secret); code != 403 {
		t.Fatalf("bootstrap token reading secrets: %d %s", code, body)
	}
	if code, _, _ := get(t, anon, base+"/api/v1/namespaces", "Authorization", "Bearer "+eid+"."+esecret); code != 401 {
		t.Fatalf("expired bootstrap token: %d", code)
	}
	uid, usecret := pki.GenerateBootstrapToken()
	if code, _, _ := get(t, anon, base+"/api/v1/namespaces", "Authorization", "Bearer "+uid+"."+usecret); code != 401 {
		t.Fatalf("unknown bootstrap token: %d", code)
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
