package benchvskube

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/internal/benchproc"
	"github.com/minik8s/minik8s/internal/pki"
)

// Tokens of the static token file every apiserver is given: an
// administrator (system:masters), for setup and the schedulers, and the
// bench user the load runs as, allowed by RBAC only.
const (
	adminToken = "bench-vs-kube-admin-token"
	benchToken = "bench-vs-kube-user-token"
	benchUser  = "bench-user"
)

// apiserver is a running apiserver under test.
type apiserver struct {
	name  string
	proc  *benchproc.Process
	base  string
	caPEM []byte
	pool  *x509.CertPool
	// cleanup stops the process and what it needs (kube's etcd).
	cleanup func()
}

func writeTokenFile(dir string) (string, error) {
	p := filepath.Join(dir, "tokens.csv")
	data := fmt.Sprintf("%s,bench-admin,bench-admin-uid,\"system:masters\"\n%s,%s,%s-uid\n", adminToken, benchToken, benchUser, benchUser)
	return p, os.WriteFile(p, []byte(data), 0o600)
}

// startOurs runs our apiserver binary as shipped (embedded etcd, HTTPS,
// its own PKI in a fresh cert dir) with the token file and extra flags.
func startOurs(ctx context.Context, dir, name, bin, tokenFile string, extra []string) (*apiserver, error) {
	dir = filepath.Join(dir, name)
	port, err := benchproc.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--data-dir", filepath.Join(dir, "etcd"), "--cert-dir", filepath.Join(dir, "pki"),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--token-auth-file", tokenFile, "--log-level", "warn"}, extra...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p, err := benchproc.Start(dir, name, bin, args...)
	if err != nil {
		return nil, err
	}
	a := &apiserver{name: name, proc: p, base: fmt.Sprintf("https://127.0.0.1:%d", port), cleanup: p.Stop}
	// The CA is written on the first start.
	caFile := filepath.Join(dir, "pki", "ca.crt")
	for deadline := time.Now().Add(time.Minute); a.pool == nil; time.Sleep(100 * time.Millisecond) {
		if err := p.Alive(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s wrote no %s", name, caFile)
		}
		if data, err := os.ReadFile(caFile); err == nil {
			pool := x509.NewCertPool()
			if pool.AppendCertsFromPEM(data) {
				a.caPEM, a.pool = data, pool
			}
		}
	}
	if err := a.waitReady(ctx); err != nil {
		p.Stop()
		return nil, err
	}
	return a, nil
}

// startKube runs kube-apiserver on an embedded etcd in this process, with a
// CA made here, the token file, and Node,RBAC authorization.
func startKube(ctx context.Context, dir, bin, tokenFile string) (*apiserver, error) {
	dir = filepath.Join(dir, "kube-apiserver")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	e, err := etcd.Start(ctx, etcd.Config{DataDir: filepath.Join(dir, "etcd"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, fmt.Errorf("embedded etcd for kube-apiserver: %w", err)
	}
	fail := func(err error) (*apiserver, error) { e.Close(); return nil, err }
	ca, err := pki.NewCA("kubernetes", 24*time.Hour)
	if err != nil {
		return fail(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if werr := os.WriteFile(p, data, 0o600); werr != nil && err == nil {
			err = werr
		}
		return p
	}
	servingCert, servingKey, err := ca.IssueServing("kube-apiserver", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, 24*time.Hour)
	if err != nil {
		return fail(err)
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fail(err)
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return fail(err)
	}
	port, err := benchproc.FreePort()
	if err != nil {
		return fail(err)
	}
	args := []string{
		"--etcd-servers=" + strings.Join(e.Endpoints(), ","),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "generated"),
		"--tls-cert-file=" + write("apiserver.crt", servingCert),
		"--tls-private-key-file=" + write("apiserver.key", servingKey),
		"--client-ca-file=" + write("ca.crt", ca.CertPEM()),
		"--token-auth-file=" + tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + write("sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})),
		"--service-account-signing-key-file=" + write("sa.key", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)})),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--profiling=false",
		"-v=1",
	}
	if err != nil {
		return fail(err)
	}
	p, err := benchproc.Start(dir, "kube-apiserver", bin, args...)
	if err != nil {
		return fail(err)
	}
	a := &apiserver{name: "kube-apiserver", proc: p, base: fmt.Sprintf("https://127.0.0.1:%d", port), caPEM: ca.CertPEM(), pool: ca.Pool(),
		cleanup: func() { p.Stop(); e.Close() }}
	if err := a.waitReady(ctx); err != nil {
		a.cleanup()
		return nil, err
	}
	return a, nil
}

// waitReady waits until /readyz answers 200 to the administrator.
func (a *apiserver) waitReady(ctx context.Context) error {
	c := a.client(adminToken, 1)
	defer c.close()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := a.proc.Alive(); err != nil {
			return err
		}
		code, _, err := c.do(ctx, http.MethodGet, "/readyz", "", nil)
		if err == nil && code == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after 2m: %d %v", a.name, code, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kubeconfig writes a kubeconfig of the administrator token for the
// schedulers.
func (a *apiserver) kubeconfig(dir string) (string, error) {
	p := filepath.Join(dir, a.name+".kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: bench
  context: {cluster: bench, user: admin}
current-context: bench
`, a.base, base64.StdEncoding.EncodeToString(a.caPEM), adminToken)
	return p, os.WriteFile(p, []byte(data), 0o600)
}

// client is an HTTP/1.1 keep-alive client with a bearer token.
type client struct {
	base  string
	token string
	hc    *http.Client
	tr    *http.Transport
}

func (a *apiserver) client(token string, conns int) *client {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: a.pool, NextProtos: []string{"http/1.1"}},
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
	}
	return &client{base: a.base, token: token, tr: tr, hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

func (c *client) close() { c.tr.CloseIdleConnections() }

// maxRetries is how often a request answered 429 is sent again, after
// its Retry-After, as client-go does (kube-apiserver's priority and
// fairness rejects what waits too long in its queues).
const maxRetries = 10

// retryAfter is the wait a 429 asks for (1 s when it names none).
func retryAfter(resp *http.Response) time.Duration {
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Second
}

// sendRetrying sends what newReq makes until it is answered other than
// 429 or maxRetries retries are spent.
func (c *client) sendRetrying(ctx context.Context, newReq func() (*http.Request, error)) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := newReq()
		if err != nil {
			return nil, err
		}
		resp, err := c.hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || attempt == maxRetries {
			return resp, err
		}
		wait := retryAfter(resp)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// do sends a request and returns the status and the whole body.
func (c *client) do(ctx context.Context, method, path, accept string, body []byte) (int, []byte, error) {
	resp, err := c.sendRetrying(ctx, func() (*http.Request, error) { return c.request(ctx, method, path, accept, body) })
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// request is a request with the client's token and the media types.
func (c *client) request(ctx context.Context, method, path, accept string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		ct := "application/json"
		if method == http.MethodPatch {
			ct = "application/merge-patch+json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	return req, nil
}

// discard GETs path and reads the body into nothing, returning its size.
func (c *client) discard(ctx context.Context, path, accept string) (int, int64, error) {
	resp, err := c.sendRetrying(ctx, func() (*http.Request, error) { return c.request(ctx, http.MethodGet, path, accept, nil) })
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

// mustDo is do that wants one of the codes.
func (c *client) mustDo(ctx context.Context, method, path string, body []byte, codes ...int) ([]byte, error) {
	code, data, err := c.do(ctx, method, path, "", body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	for _, ok := range codes {
		if code == ok {
			return data, nil
		}
	}
	return nil, fmt.Errorf("%s %s: %d %s", method, path, code, data[:min(len(data), 300)])
}
