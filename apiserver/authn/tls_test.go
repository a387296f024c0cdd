package authn

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/internal/pki"
)

// echo is the protected handler: it reports who the filter said is asking
// and whether the Authorization header reached it.
type echoed struct {
	Name          string   `json:"name"`
	Groups        []string `json:"groups"`
	Authorization string   `json:"authorization"`
}

type cluster struct {
	bundle *pki.Bundle
	srv    *httptest.Server
	hits   atomic.Int64
}

func startCluster(t *testing.T, tlsConfig func(b *pki.Bundle) *tls.Config, a func(b *pki.Bundle) Authenticator) *cluster {
	t.Helper()
	b, err := pki.EnsureServing(t.TempDir(), pki.ServingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{bundle: b}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		u, ok := request.UserFrom(r.Context())
		if !ok {
			http.Error(w, "no user in context", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(echoed{Name: u.Name, Groups: u.Groups, Authorization: r.Header.Get("Authorization")})
	})
	c.srv = httptest.NewUnstartedServer(Filter(a(b), DefaultAnonymousPaths)(echo))
	c.srv.TLS = tlsConfig(b)
	c.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected here
	c.srv.StartTLS()
	t.Cleanup(c.srv.Close)
	return c
}

func serverTLS(b *pki.Bundle) *tls.Config {
	cfg, err := b.ServerTLSConfig()
	if err != nil {
		panic(err)
	}
	return cfg
}

// client trusts only the cluster CA and presents certPEM/keyPEM if given.
func (c *cluster) client(t *testing.T, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: c.bundle.CA.Pool(), MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

type result struct {
	code   int
	user   echoed
	status api.Status
	err    error
}

func (c *cluster) get(t *testing.T, cl *http.Client, path, token string) result {
	t.Helper()
	req, err := http.NewRequest("GET", c.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	res := result{code: resp.StatusCode}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &res.user); err != nil {
			t.Fatalf("decode %q: %v", body, err)
		}
	} else if err := json.Unmarshal(body, &res.status); err != nil {
		t.Fatalf("decode Status %q: %v", body, err)
	}
	return res
}

func TestFilterOverTLS(t *testing.T) {
	t.Parallel()
	const secret = "0123456789abcdef"
	store := secrets{}
	store.add(mustSecret(t, "abcdef", secret, time.Hour, []string{pki.BootstrapDefaultNodeGroup}))
	expired := mustSecret(t, "expird", secret, time.Hour, nil)
	expired.Data["expiration"] = []byte(time.Now().Add(-time.Second).UTC().Format(time.RFC3339))
	store.add(expired)
	signingOnly := mustSecret(t, "signer", secret, time.Hour, nil)
	delete(signingOnly.Data, pki.BootstrapTokenUsageAuthentication)
	store.add(signingOnly)
	tokenPath := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokenPath, []byte("static-token-1,alice,1001,\"dev,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := NewTokenFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, serverTLS, func(b *pki.Bundle) Authenticator {
		return Union(NewX509(b.CA.Pool()), tf, NewBootstrapToken(store))
	})
	b := c.bundle

	nodeCSR, nodeKey, err := pki.NewCSR(pki.NodeUser("node-a"), []string{pki.NodesGroup})
	if err != nil {
		t.Fatal(err)
	}
	nodeCert, err := b.CA.SignCSR(nodeCSR, pki.KubeletClientUsages, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// a CA of another cluster with a different name: Go's client sees the
	// server does not list its issuer among the acceptable CAs and sends no
	// certificate at all, so the request is anonymous
	otherNamed, _ := pki.NewCA("other-cluster", 0)
	otherNamedCert, otherNamedKey, _ := otherNamed.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)

	anonymous := echoed{Name: Anonymous, Groups: []string{AllUnauthenticated}}
	tests := []struct {
		name     string
		cert     [2][]byte
		token    string
		path     string
		wantCode int
		wantUser echoed
	}{
		{name: "admin certificate", cert: [2][]byte{b.AdminCertPEM, b.AdminKeyPEM}, path: "/api/v1/pods", wantCode: 200,
			wantUser: echoed{Name: "kubernetes-admin", Groups: []string{"system:masters", AllAuthenticated}}},
		{name: "node certificate from a CSR", cert: [2][]byte{nodeCert, nodeKey}, path: "/api/v1/nodes/node-a", wantCode: 200,
			wantUser: echoed{Name: "system:node:node-a", Groups: []string{"system:nodes", AllAuthenticated}}},
		{name: "certificate wins over a bad token", cert: [2][]byte{b.AdminCertPEM, b.AdminKeyPEM}, token: "nonsense", path: "/api", wantCode: 200,
			wantUser: echoed{Name: "kubernetes-admin", Groups: []string{"system:masters", AllAuthenticated}}},
		{name: "no credentials", path: "/api/v1/pods", wantCode: 401},
		{name: "no credentials on /", path: "/", wantCode: 401},
		{name: "anonymous healthz", path: "/healthz", wantCode: 200, wantUser: anonymous},
		{name: "anonymous healthz verbose", path: "/healthz?verbose", wantCode: 200, wantUser: anonymous},
		{name: "anonymous readyz", path: "/readyz", wantCode: 200, wantUser: anonymous},
		{name: "anonymous livez", path: "/livez", wantCode: 200, wantUser: anonymous},
		{name: "anonymous version", path: "/version", wantCode: 200, wantUser: anonymous},
		{name: "healthz subpath is not exact", path: "/healthz/etcd", wantCode: 401},
		{name: "healthz prefix is not exact", path: "/healthzx", wantCode: 401},
		{name: "trailing slash is not exact", path: "/version/", wantCode: 401},
		{name: "bad token on an anonymous path", token: "nonsense", path: "/healthz", wantCode: 401},
		{name: "static token", token: "static-token-1", path: "/api/v1/pods", wantCode: 200,
			wantUser: echoed{Name: "alice", Groups: []string{"dev", "ops", AllAuthenticated}}},
		{name: "unknown static token", token: "static-token-2", path: "/api/v1/pods", wantCode: 401},
		{name: "bootstrap token", token: "abcdef." + secret, path: "/apis/certificates.k8s.io/v1/certificatesigningrequests", wantCode: 200,
			wantUser: echoed{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", pki.BootstrapDefaultNodeGroup, AllAuthenticated}}},
		{name: "bootstrap token wrong secret", token: "abcdef.aaaaaaaaaaaaaaaa", path: "/api", wantCode: 401},
		{name: "bootstrap token unknown id", token: "zzzzzz." + secret, path: "/api", wantCode: 401},
		{name: "bootstrap token expired", token: "expird." + secret, path: "/api", wantCode: 401},
		{name: "bootstrap token without authentication usage", token: "signer." + secret, path: "/api", wantCode: 401},
		{name: "other CA, other name: no certificate sent", cert: [2][]byte{otherNamedCert, otherNamedKey}, path: "/api/v1/pods", wantCode: 401},
		{name: "other CA, other name, anonymous path", cert: [2][]byte{otherNamedCert, otherNamedKey}, path: "/healthz", wantCode: 200, wantUser: anonymous},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := c.get(t, c.client(t, tc.cert[0], tc.cert[1]), tc.path, tc.token)
			if res.err != nil {
				t.Fatal(res.err)
			}
			if res.code != tc.wantCode {
				t.Fatalf("code %d, want %d (%+v)", res.code, tc.wantCode, res.status)
			}
			if tc.wantCode == 401 {
				want := api.Status{TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: api.StatusFailure,
					Message: "Unauthorized", Reason: api.StatusReasonUnauthorized, Code: 401}
				if res.status.Kind != want.Kind || res.status.APIVersion != want.APIVersion || res.status.Status != want.Status ||
					res.status.Message != want.Message || res.status.Reason != want.Reason || res.status.Code != want.Code {
					t.Fatalf("Status %+v, want %+v", res.status, want)
				}
				return
			}
			if res.user.Name != tc.wantUser.Name || !slices.Equal(res.user.Groups, tc.wantUser.Groups) {
				t.Fatalf("user %+v, want %+v", res.user, tc.wantUser)
			}
			if res.user.Authorization != "" {
				t.Fatalf("Authorization header %q reached the handler", res.user.Authorization)
			}
		})
	}
}

// TestTLSRejects covers what never reaches the handler: the TLS layer, set
// up as the apiserver must be (VerifyClientCertIfGiven with the cluster CA
// as ClientCAs), refuses a certificate that does not chain to the cluster
// CA for client auth during the handshake.
func TestTLSRejects(t *testing.T) {
	t.Parallel()
	c := startCluster(t, serverTLS, func(b *pki.Bundle) Authenticator { return NewX509(b.CA.Pool()) })
	b := c.bundle

	// Another cluster's CA with kubeadm's same name "kubernetes": the
	// client cannot tell it from ours by name and sends its certificate.
	rogue, _ := pki.NewCA(pki.CACommonName, 0)
	rogueCert, rogueKey, _ := rogue.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)
	// A client that always sends its certificate, whatever the server asks.
	otherNamed, _ := pki.NewCA("other-cluster", 0)
	forcedCert, forcedKey, _ := otherNamed.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)
	forcedPair, _ := tls.X509KeyPair(forcedCert, forcedKey)
	// Our own CA's serving certificate is not valid for client auth.
	servCert, servKey, _ := b.CA.IssueServing("impostor", []string{"localhost"}, nil, time.Hour)

	forced := c.client(t, nil, nil)
	forced.Transport.(*http.Transport).TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return &forcedPair, nil
	}
	tests := []struct {
		name   string
		client *http.Client
	}{
		{"wrong CA, same CA name", c.client(t, rogueCert, rogueKey)},
		{"wrong CA, sent regardless", forced},
		{"serving certificate as client certificate", c.client(t, servCert, servKey)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/v1/pods", "/healthz"} {
				res := c.get(t, tc.client, path, "")
				if res.err == nil {
					t.Fatalf("%s: request succeeded with code %d, want a TLS failure", path, res.code)
				}
				if !strings.Contains(res.err.Error(), "tls: ") {
					t.Fatalf("%s: err = %v, want a TLS alert", path, res.err)
				}
				t.Logf("%s: %v", path, res.err)
			}
		})
	}
	if n := c.hits.Load(); n != 0 {
		t.Fatalf("handler reached %d times", n)
	}

	// a client that does not trust the cluster CA refuses the server
	untrusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}, Timeout: 10 * time.Second}
	if _, err := untrusting.Get(c.srv.URL + "/healthz"); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("client without the CA: err = %v", err)
	}
}

// TestPlainHTTPToTLSPort: Go's TLS server answers a plain HTTP request with
// 400 and never runs a handler.
func TestPlainHTTPToTLSPort(t *testing.T) {
	t.Parallel()
	c := startCluster(t, serverTLS, func(b *pki.Bundle) Authenticator { return NewX509(b.CA.Pool()) })
	plain := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/healthz", "/api/v1/pods"} {
		resp, err := plain.Get("http://" + c.srv.Listener.Addr().String() + path)
		if err != nil {
			t.Fatalf("%s over plain HTTP: %v, want Go's 400 answer", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTP request to an HTTPS server") {
			t.Fatalf("%s over plain HTTP: %d %q", path, resp.StatusCode, body)
		}
	}
	if n := c.hits.Load(); n != 0 {
		t.Fatalf("handler reached %d times over plain HTTP", n)
	}
}

// TestAuthenticatorRejectsWhenTLSDoesNotVerify: behind a listener that
// only asks for a certificate (tls.RequestClientCert, no verification) a
// foreign certificate reaches the authenticator, which refuses it; the
// request is a 401, not anonymous, even on an anonymous path.
func TestAuthenticatorRejectsWhenTLSDoesNotVerify(t *testing.T) {
	t.Parallel()
	c := startCluster(t, func(b *pki.Bundle) *tls.Config {
		cfg := serverTLS(b)
		cfg.ClientAuth = tls.RequestClientCert
		cfg.ClientCAs = nil
		return cfg
	}, func(b *pki.Bundle) Authenticator { return NewX509(b.CA.Pool()) })
	rogue, _ := pki.NewCA(pki.CACommonName, 0)
	rogueCert, rogueKey, _ := rogue.IssueClient("kubernetes-admin", []string{"system:masters"}, time.Hour)
	cl := c.client(t, rogueCert, rogueKey)
	for _, path := range []string{"/api/v1/pods", "/healthz"} {
		res := c.get(t, cl, path, "")
		if res.err != nil || res.code != 401 {
			t.Fatalf("%s: code %d err %v, want 401", path, res.code, res.err)
		}
	}
	if res := c.get(t, c.client(t, c.bundle.AdminCertPEM, c.bundle.AdminKeyPEM), "/api", ""); res.code != 200 || res.user.Name != "kubernetes-admin" {
		t.Fatalf("admin: %+v", res)
	}
}

// TestFilterNilAuthenticator: with nothing configured only anonymous paths
// answer.
func TestFilterNilAuthenticator(t *testing.T) {
	t.Parallel()
	h := Filter(nil, []string{"/healthz"})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for path, want := range map[string]int{"/healthz": 200, "/api": 401} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", path, rec.Code, want)
		}
		if want == 401 && rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("401 content type %q", rec.Header().Get("Content-Type"))
		}
	}
}
