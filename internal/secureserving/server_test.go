package secureserving

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/internal/pki"
)

// fakeAPIServer answers TokenReviews (tokens: token -> user) and
// SubjectAccessReviews (allowed: the users who may get /metrics) and
// counts them; failing makes both answer 500.
type fakeAPIServer struct {
	tokens  map[string]api.UserInfo
	allowed []string
	failing atomic.Bool

	tokenReviews, accessReviews atomic.Int32
	mu                          sync.Mutex
	lastSAR                     api.SubjectAccessReviewSpec
	srv                         *httptest.Server
}

func startFakeAPIServer(t *testing.T) *fakeAPIServer {
	f := &fakeAPIServer{
		tokens: map[string]api.UserInfo{
			"prom-token": {Username: "prom", UID: "u1", Groups: []string{"monitoring"}},
			"bob-token":  {Username: "bob", Groups: []string{"system:authenticated"}},
		},
		allowed: []string{"prom"},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.failing.Load() {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"boom","code":500}`, http.StatusInternalServerError)
			return
		}
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			f.tokenReviews.Add(1)
			var tr api.TokenReview
			_ = json.Unmarshal(body, &tr)
			if u, ok := f.tokens[tr.Spec.Token]; ok {
				tr.Status = api.TokenReviewStatus{Authenticated: true, User: u}
			} else {
				tr.Status = api.TokenReviewStatus{Error: "invalid token"}
			}
			_ = json.NewEncoder(w).Encode(tr)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			f.accessReviews.Add(1)
			var sar api.SubjectAccessReview
			_ = json.Unmarshal(body, &sar)
			f.mu.Lock()
			f.lastSAR = sar.Spec
			f.mu.Unlock()
			if slices.Contains(f.allowed, sar.Spec.User) {
				sar.Status = api.SubjectAccessReviewStatus{Allowed: true, Reason: "test allows"}
			}
			_ = json.NewEncoder(w).Encode(sar)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPIServer) kubeconfig(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfig.Write(path, kubeconfig.NewForCluster(f.srv.URL, nil, "scheduler", kubeconfig.AuthInfo{Token: "scheduler-token"}, "")); err != nil {
		t.Fatal(err)
	}
	return path
}

// served is a Server on a loopback port and a client for it presenting
// cert (if any) and the bearer token given to get.
type served struct {
	url string
	hc  *http.Client
}

func serve(t *testing.T, opts Options, cert *tls.Certificate) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.Listener = ln
	mux := http.NewServeMux()
	for _, p := range []string{"/healthz", "/metrics", "/debug/x"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			// A token that authenticated is not passed on.
			if h := r.Header.Get("Authorization"); strings.Contains(h, "prom-token") {
				t.Errorf("%s reached the handler with %q", p, h)
			}
			_, _ = io.WriteString(w, "ok "+p)
		})
	}
	s, err := New(opts, mux, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	tc := &tls.Config{InsecureSkipVerify: true}
	if cert != nil {
		// Offered even when the server names other CAs, as curl does.
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return &served{url: "https://" + ln.Addr().String(), hc: &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 10 * time.Second}}
}

// get returns the answer's code and body.
func (s *served) get(t *testing.T, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const (
	unauthorizedBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
)

func forbiddenBody(user, path string) string {
	return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"` + user +
		`\" cannot get path \"` + path + `\"","reason":"Forbidden","details":{},"code":403}`
}

// The delegated answers: no credentials is anonymous (open paths only),
// a token the apiserver does not know is 401, a known token is its
// user and the apiserver's SubjectAccessReview decides, with the user's
// name, uid and groups (system:authenticated added) and the lower-cased
// method.
func TestDelegatedAuthenticationAndAuthorization(t *testing.T) {
	f := startFakeAPIServer(t)
	opts := DefaultOptions(1, "test")
	opts.Authentication.Kubeconfig = f.kubeconfig(t)
	opts.Authentication.SkipLookup = true
	opts.Authorization.Kubeconfig = opts.Authentication.Kubeconfig
	s := serve(t, opts, nil)

	cases := []struct {
		name, path, token string
		code              int
		body              string
	}{
		{"healthz anonymous", "/healthz", "", 200, "ok /healthz"},
		{"metrics anonymous", "/metrics", "", 403, forbiddenBody("system:anonymous", "/metrics")},
		{"unknown token", "/metrics", "nobody-token", 401, unauthorizedBody},
		{"unknown token on an open path", "/healthz", "nobody-token", 401, unauthorizedBody},
		// "Bearer" without a token is no bearer token (kube's too).
		{"empty token", "/healthz", " ", 200, "ok /healthz"},
		{"user without the right", "/metrics", "bob-token", 403, forbiddenBody("bob", "/metrics")},
		{"user with the right", "/metrics", "prom-token", 200, "ok /metrics"},
		{"unserved path is still authorized first", "/nothing", "", 403, forbiddenBody("system:anonymous", "/nothing")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.get(t, tc.path, tc.token)
			if code != tc.code || strings.TrimSpace(body) != tc.body {
				t.Errorf("GET %s: %d %s\nwant %d %s", tc.path, code, body, tc.code, tc.body)
			}
		})
	}
	s.get(t, "/debug/x", "prom-token")
	f.mu.Lock()
	sar := f.lastSAR
	f.mu.Unlock()
	if sar.User != "prom" || sar.NonResourceAttributes == nil || *sar.NonResourceAttributes != (api.NonResourceAttributes{Path: "/debug/x", Verb: "get"}) ||
		sar.UID != "u1" || !slices.Equal(sar.Groups, []string{"monitoring", "system:authenticated"}) {
		t.Errorf("review spec %+v", sar)
	}
}

// Answers are kept for the TTLs: the same request again within them asks
// the apiserver nothing, after them it asks again; errors are not kept
// and answer 500.
func TestReviewsCached(t *testing.T) {
	f := startFakeAPIServer(t)
	opts := DefaultOptions(1, "test")
	opts.Authentication.Kubeconfig = f.kubeconfig(t)
	opts.Authentication.SkipLookup = true
	opts.Authorization.Kubeconfig = opts.Authentication.Kubeconfig
	opts.Authentication.CacheTTL = 2 * time.Second
	opts.Authorization.AllowCacheTTL, opts.Authorization.DenyCacheTTL = 2*time.Second, 2*time.Second
	s := serve(t, opts, nil)

	for range 5 {
		if code, _ := s.get(t, "/metrics", "prom-token"); code != 200 {
			t.Fatalf("prom: %d", code)
		}
		if code, _ := s.get(t, "/metrics", "bob-token"); code != 403 {
			t.Fatalf("bob: %d", code)
		}
		if code, _ := s.get(t, "/metrics", "nobody-token"); code != 401 {
			t.Fatalf("nobody: %d", code)
		}
	}
	if tr, sar := f.tokenReviews.Load(), f.accessReviews.Load(); tr != 3 || sar != 2 {
		t.Errorf("%d token reviews and %d access reviews for 15 requests of 3 users, want 3 and 2", tr, sar)
	}
	time.Sleep(2100 * time.Millisecond)
	s.get(t, "/metrics", "prom-token")
	if tr, sar := f.tokenReviews.Load(), f.accessReviews.Load(); tr != 4 || sar != 3 {
		t.Errorf("after the TTLs: %d token reviews and %d access reviews, want 4 and 3", tr, sar)
	}

	f.failing.Store(true)
	if code, body := s.get(t, "/metrics/x", "prom-token"); code != 500 || !strings.HasPrefix(body, `Internal Server Error: "/metrics/x": subject access review:`) {
		t.Errorf("review failing: %d %s", code, body)
	}
	if code, _ := s.get(t, "/metrics", "other-token"); code != 401 {
		t.Errorf("token review failing: %d, want 401", code)
	}
	f.failing.Store(false)
	if code, _ := s.get(t, "/metrics/x", "prom-token"); code != 200 && code != 404 {
		t.Errorf("after the failure: %d (the error was kept)", code)
	}
}

// Client certificates of --client-ca-file authenticate (CN user, O
// groups); system:masters passes without a review; a certificate of
// another CA is 401; without an authorization kubeconfig everything but
// the open paths and system:masters is refused.
func TestClientCertificatesAndNoAuthorizer(t *testing.T) {
	ca, err := pki.NewCA("test-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := pki.NewCA("other-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	issue := func(ca *pki.CA, user string, groups ...string) *tls.Certificate {
		c, k, err := ca.IssueClient(user, groups, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return &cert
	}
	opts := DefaultOptions(1, "test")
	opts.Authentication.ClientCAFile = caFile
	opts.Authorization.AlwaysAllowPaths = []string{"/healthz", "/debug/*"}
	opts.CertDir = t.TempDir()

	cases := []struct {
		name string
		cert *tls.Certificate
		path string
		code int
		body string
	}{
		{"admin", issue(ca, "admin", "system:masters"), "/metrics", 200, "ok /metrics"},
		{"user", issue(ca, "alice", "dev"), "/metrics", 403, forbiddenBody("alice", "/metrics")},
		{"user on a prefix path", issue(ca, "alice"), "/debug/x", 200, "ok /debug/x"},
		{"other CA", issue(other, "admin", "system:masters"), "/healthz", 401, unauthorizedBody},
		{"anonymous", nil, "/metrics", 403, forbiddenBody("system:anonymous", "/metrics")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, opts, tc.cert)
			code, body := s.get(t, tc.path, "")
			if code != tc.code || strings.TrimSpace(body) != tc.body {
				t.Errorf("GET %s: %d %s\nwant %d %s", tc.path, code, body, tc.code, tc.body)
			}
		})
	}
	// The self-signed pair was written once and is reused.
	crt, err := os.ReadFile(filepath.Join(opts.CertDir, "test.crt"))
	if err != nil {
		t.Fatal(err)
	}
	certs, err := pki.ParseCertsPEM(crt)
	if err != nil || len(certs) != 2 || !slices.Contains(certs[0].DNSNames, "localhost") || certs[1].Subject.CommonName != certs[0].Issuer.CommonName {
		t.Errorf("self-signed chain: %v %v", certs, err)
	}
}
