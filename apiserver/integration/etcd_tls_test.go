package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/apiserver/etcd"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
)

// etcdRead dials endpoint with tlsCfg (nil: plain) and reads key; it
// returns the value or the error.
func etcdRead(t *testing.T, endpoint string, tlsCfg *tls.Config, key string) (string, error) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsCfg, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return "", err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil {
		return "", err
	}
	if len(resp.Kvs) != 1 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}

// etcdTLS trusts caFile and presents certFile/keyFile (none when empty),
// always, even when the server names other CAs.
func etcdTLS(t *testing.T, caFile, certFile, keyFile string) *tls.Config {
	t.Helper()
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s: no certificate", caFile)
	}
	cfg := &tls.Config{RootCAs: roots}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return cfg
}

// TestEmbeddedEtcdRequiresClientCerts starts the apiserver the production
// way (embedded etcd, HTTPS, certificates made in --cert-dir) and checks
// that its etcd answers only the apiserver-etcd-client certificate (and
// etcd/healthcheck-client, what etcdctl uses): a plain-HTTP client, a TLS
// client without a certificate, and clients with certificates of the
// cluster CA or of another etcd CA read nothing. A restart reuses the same
// certificates and data.
func TestEmbeddedEtcdRequiresClientCerts(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	certDir := s.Options.CertDir
	ctx := t.Context()
	cms := client.Resource[api.ConfigMap](s.AdminClient(t)).Namespace("default")
	if _, err := cms.Create(ctx, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "kept"}, Data: map[string]string{"k": "before restart"}}); err != nil {
		t.Fatalf("create through HTTPS: %v", err)
	}

	endpoint := s.Backend().Endpoints()[0]
	if !strings.HasPrefix(endpoint, "https://") || !s.Backend().Embedded() {
		t.Fatalf("embedded etcd at %s, want https", endpoint)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	const key = "/registry/configmaps/default/kept"
	ca := filepath.Join(certDir, pki.EtcdCACertFile)
	other := t.TempDir()
	if _, err := pki.EnsureEtcd(other, pki.EtcdOptions{}); err != nil {
		t.Fatal(err)
	}
	refused := map[string]func() (string, error){
		"plain HTTP":                       func() (string, error) { return etcdRead(t, "http://"+u.Host, nil, key) },
		"TLS without a client certificate": func() (string, error) { return etcdRead(t, endpoint, etcdTLS(t, ca, "", ""), key) },
		"the cluster CA's admin certificate": func() (string, error) {
			return etcdRead(t, endpoint, etcdTLS(t, ca, filepath.Join(certDir, pki.AdminCertFile), filepath.Join(certDir, pki.AdminKeyFile)), key)
		},
		"another etcd CA's apiserver-etcd-client": func() (string, error) {
			return etcdRead(t, endpoint, etcdTLS(t, ca, filepath.Join(other, pki.APIServerEtcdClientCertFile), filepath.Join(other, pki.APIServerEtcdClientKeyFile)), key)
		},
	}
	t.Run("clients", func(t *testing.T) {
		for name, try := range refused {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				if v, err := try(); err == nil {
					t.Errorf("read %s: %q, want refused", key, v)
				}
			})
		}
		for _, pair := range [][2]string{{pki.APIServerEtcdClientCertFile, pki.APIServerEtcdClientKeyFile}, {pki.EtcdHealthcheckClientCertFile, pki.EtcdHealthcheckClientKeyFile}} {
			t.Run(filepath.Base(pair[0]), func(t *testing.T) {
				t.Parallel()
				v, err := etcdRead(t, endpoint, etcdTLS(t, ca, filepath.Join(certDir, pair[0]), filepath.Join(certDir, pair[1])), key)
				if err != nil || !strings.Contains(v, "before restart") {
					t.Errorf("read %q, %v; want the ConfigMap", v, err)
				}
			})
		}
	})

	// A restart on the same directories: the same certificates, the same data.
	files := []string{pki.EtcdCACertFile, pki.EtcdCAKeyFile, pki.EtcdServerCertFile, pki.EtcdPeerCertFile,
		pki.EtcdHealthcheckClientCertFile, pki.APIServerEtcdClientCertFile, pki.APIServerEtcdClientKeyFile}
	before := map[string][]byte{}
	for _, f := range files {
		if before[f], err = os.ReadFile(filepath.Join(certDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	s.Shutdown()
	opts := s.Options
	apiservertest.WithTLS(&opts)
	s = apiservertest.StartWith(t, opts)
	for _, f := range files {
		if after, err := os.ReadFile(filepath.Join(certDir, f)); err != nil || !bytes.Equal(after, before[f]) {
			t.Errorf("%s changed across a restart (%v)", f, err)
		}
	}
	got, err := client.Resource[api.ConfigMap](s.AdminClient(t)).Namespace("default").Get(ctx, "kept")
	if err != nil || got.Data["k"] != "before restart" {
		t.Fatalf("after restart: %v %v", got, err)
	}
	if endpoint := s.Backend().Endpoints()[0]; !strings.HasPrefix(endpoint, "https://") {
		t.Fatalf("restarted embedded etcd at %s, want https", endpoint)
	} else if v, err := etcdRead(t, endpoint, etcdTLS(t, ca, "", ""), key); err == nil {
		t.Fatalf("restarted etcd answered a client without a certificate: %q", v)
	}
}

// TestExternalEtcdTLS points the apiserver at an external etcd that
// requires client certificates, with --etcd-cafile, --etcd-certfile and
// --etcd-keyfile, kubeadm's external-etcd setup.
func TestExternalEtcdTLS(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test")
	}
	certDir := t.TempDir()
	b, err := pki.EnsureEtcd(certDir, pki.EtcdOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca := b.Path(pki.EtcdCACertFile)
	ext, err := etcd.Start(t.Context(), etcd.Config{DataDir: t.TempDir(), Logger: apiservertest.Logger(),
		ServerTLS: &etcd.TLSFiles{CertFile: b.Path(pki.EtcdServerCertFile), KeyFile: b.Path(pki.EtcdServerKeyFile), ClientCAFile: ca},
		PeerTLS:   &etcd.TLSFiles{CertFile: b.Path(pki.EtcdPeerCertFile), KeyFile: b.Path(pki.EtcdPeerKeyFile), ClientCAFile: ca},
		CAFile:    ca, CertFile: b.Path(pki.EtcdHealthcheckClientCertFile), KeyFile: b.Path(pki.EtcdHealthcheckClientKeyFile)})
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(func() { _ = ext.Close() })
	s := apiservertest.Start(t, func(o *app.Options) {
		o.EtcdServers, o.DataDir = ext.Endpoints(), ""
		o.EtcdCAFile, o.EtcdCertFile, o.EtcdKeyFile = ca, b.Path(pki.APIServerEtcdClientCertFile), b.Path(pki.APIServerEtcdClientKeyFile)
	})
	if s.Backend().Embedded() {
		t.Fatal("apiserver started an embedded etcd despite --etcd-servers")
	}
	newClient(t, s).must(201, "POST", cms, configMap("ext-tls", nil, map[string]string{"a": "b"}))
	resp, err := ext.Client().Get(t.Context(), "/registry/configmaps/default/ext-tls")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("key not in external etcd: %v %v", err, resp)
	}
	if _, err := os.Stat(filepath.Join(s.Options.CertDir, pki.EtcdDir)); err == nil {
		t.Error("an etcd PKI was made in --cert-dir although etcd is external")
	}
}
