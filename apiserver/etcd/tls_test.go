package etcd_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/internal/pki"
)

// tlsConfig returns an embedded server's configuration secured by the etcd
// PKI that pki.EnsureEtcd makes in certDir, the apiserver's way.
func tlsConfig(t *testing.T, certDir string) etcd.Config {
	t.Helper()
	b, err := pki.EnsureEtcd(certDir, pki.EtcdOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return etcd.Config{
		DataDir:   t.TempDir(),
		ServerTLS: &etcd.TLSFiles{CertFile: b.Path(pki.EtcdServerCertFile), KeyFile: b.Path(pki.EtcdServerKeyFile), ClientCAFile: b.Path(pki.EtcdCACertFile)},
		PeerTLS:   &etcd.TLSFiles{CertFile: b.Path(pki.EtcdPeerCertFile), KeyFile: b.Path(pki.EtcdPeerKeyFile), ClientCAFile: b.Path(pki.EtcdCACertFile)},
		CAFile:    b.Path(pki.EtcdCACertFile), CertFile: b.Path(pki.APIServerEtcdClientCertFile), KeyFile: b.Path(pki.APIServerEtcdClientKeyFile),
	}
}

// httpsClient trusts the etcd CA and presents certFile/keyFile (none when
// empty).
func httpsClient(t *testing.T, caFile, certFile, keyFile string) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: roots}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		// Always sent, even when its issuer is not among the CAs the
		// server names (Go's client would otherwise send nothing).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// get returns the status and body of GET u, or the error.
func get(c *http.Client, u string) (int, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// TestEmbeddedTLSRequiresClientCert: a server given ServerTLS and PeerTLS
// serves only TLS on both URLs and answers only clients with a certificate
// of the etcd CA; plain HTTP, no certificate, and a certificate of another
// CA are all refused.
func TestEmbeddedTLSRequiresClientCert(t *testing.T) {
	t.Parallel()
	certDir := t.TempDir()
	cfg := tlsConfig(t, certDir)
	b, err := start(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	endpoint := b.Endpoints()[0]
	if !strings.HasPrefix(endpoint, "https://127.0.0.1:") {
		t.Fatalf("endpoint %s, want https on loopback", endpoint)
	}
	if _, err := b.Client().Put(t.Context(), "/registry/secrets/default/s", "v"); err != nil {
		t.Fatalf("apiserver-etcd-client: %v", err)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}

	// Another cluster's etcd PKI: same layout, another CA.
	other := t.TempDir()
	if _, err := pki.EnsureEtcd(other, pki.EtcdOptions{}); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(certDir, pki.EtcdCACertFile)
	refused := map[string]func() (int, string, error){
		"plain HTTP": func() (int, string, error) {
			return get(&http.Client{Timeout: 5 * time.Second}, "http://"+u.Host+"/health")
		},
		"TLS without a client certificate": func() (int, string, error) {
			return get(httpsClient(t, ca, "", ""), endpoint+"/health")
		},
		"a client certificate of another CA": func() (int, string, error) {
			return get(httpsClient(t, ca, filepath.Join(other, pki.EtcdHealthcheckClientCertFile), filepath.Join(other, pki.EtcdHealthcheckClientKeyFile)), endpoint+"/health")
		},
		"a client certificate of the cluster CA": func() (int, string, error) {
			cluster, err := pki.EnsureServing(t.TempDir(), pki.ServingOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return get(httpsClient(t, ca, cluster.Path(pki.AdminCertFile), cluster.Path(pki.AdminKeyFile)), endpoint+"/health")
		},
	}
	for name, try := range refused {
		code, body, err := try()
		if err == nil {
			t.Errorf("%s: got %d %q, want the connection refused", name, code, body)
		}
	}
	code, body, err := get(httpsClient(t, ca, filepath.Join(certDir, pki.EtcdHealthcheckClientCertFile), filepath.Join(certDir, pki.EtcdHealthcheckClientKeyFile)), endpoint+"/health")
	if err != nil || code != http.StatusOK || !strings.Contains(body, `"health":"true"`) {
		t.Fatalf("healthcheck-client: %d %q %v, want 200 healthy", code, body, err)
	}

	// The peer URL: TLS, and only members of the etcd CA.
	peer := b.PeerURL()
	if !strings.HasPrefix(peer, "https://127.0.0.1:") {
		t.Fatalf("peer URL %s, want https on loopback", peer)
	}
	if code, body, err := get(httpsClient(t, ca, "", ""), peer+"/members"); err == nil {
		t.Errorf("peer URL without a client certificate: %d %q, want the connection refused", code, body)
	}
	code, body, err = get(httpsClient(t, ca, filepath.Join(certDir, pki.EtcdPeerCertFile), filepath.Join(certDir, pki.EtcdPeerKeyFile)), peer+"/members")
	if err != nil || code != http.StatusOK {
		t.Errorf("peer URL with the peer certificate: %d %q %v, want 200", code, body, err)
	}

	// The gRPC API, what etcdctl uses: a client without a certificate reads
	// nothing.
	noCert := httpsClient(t, ca, "", "").Transport.(*http.Transport).TLSClientConfig
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: noCert, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if resp, err := cli.Get(ctx, "/registry/secrets/default/s"); err == nil {
		t.Fatalf("gRPC client without a certificate read %v", resp.Kvs)
	}
}

// TestEmbeddedTLSSchemes: with certificates the URLs must be https,
// without them http (or unix): etcd would otherwise serve plain
// HTTP and ignore the certificates, or fail later.
func TestEmbeddedTLSSchemes(t *testing.T) {
	t.Parallel()
	cfg := tlsConfig(t, t.TempDir())
	plainClient := cfg
	plainClient.ListenClientURL = "http://127.0.0.1:0"
	plainPeer := cfg
	plainPeer.ListenPeerURL = "http://127.0.0.1:0"
	noClientCert := cfg
	noClientCert.CertFile = ""
	unixs := cfg
	unixs.ListenClientURL = "unixs://localhost:0"
	noTLS := etcd.Config{DataDir: t.TempDir(), ListenClientURL: "https://127.0.0.1:0"}
	for name, c := range map[string]etcd.Config{"plain client URL": plainClient, "plain peer URL": plainPeer,
		"no client certificate for ourselves": noClientCert, "https without certificates": noTLS, "unixs (not wired up)": unixs} {
		c.DataDir = t.TempDir()
		if b, err := start(t, c); err == nil {
			b.Close()
			t.Errorf("%s: started", name)
		}
	}
}

// TestPlainDataServedWithTLS: a data directory written by a plain server
// (before the embedded etcd served TLS) is served with TLS after an
// upgrade, with its data.
func TestPlainDataServedWithTLS(t *testing.T) {
	t.Parallel()
	cfg := tlsConfig(t, t.TempDir())
	plain, err := start(t, etcd.Config{DataDir: cfg.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Client().Put(t.Context(), "/registry/x", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := plain.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := start(t, cfg)
	if err != nil {
		t.Fatalf("TLS on a plain server's data: %v", err)
	}
	defer b.Close()
	got, err := b.Client().Get(t.Context(), "/registry/x")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v1" {
		t.Fatalf("after the upgrade: %v %v", got, err)
	}
	if !strings.HasPrefix(b.Endpoints()[0], "https://") {
		t.Fatalf("endpoint %s, want https", b.Endpoints()[0])
	}
}
