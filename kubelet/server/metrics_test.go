package server_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
	"github.com/minik8s/minik8s/kubelet/bootstrap"
	"github.com/minik8s/minik8s/kubelet/server"
)

// recordingAuthorizer allows the users in allowed and records what it
// was asked.
type recordingAuthorizer struct {
	allowed []string
	mu      sync.Mutex
	asked   []string
}

func (a *recordingAuthorizer) Authorize(_ context.Context, user string, _ []string, verb, sub string) (bool, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, user+" "+verb+" nodes/"+sub)
	for _, u := range a.allowed {
		if u == user {
			return true, "", nil
		}
	}
	return false, "", nil
}

// TestMetricsAuthorizedAsNodesMetrics: the kubelet's own /metrics is on
// its HTTPS port, as Kubernetes' kubelet serves it: a client certificate
// is required, and a user other than the apiserver and system:masters
// needs get on nodes/metrics (the subresource kube's kubelet asks a
// SubjectAccessReview about, which system:monitoring grants).
func TestMetricsAuthorizedAsNodesMetrics(t *testing.T) {
	ca, err := pki.NewCA("cluster", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := bootstrap.EnsureServingCert(t.TempDir(), "node-m", []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	authz := &recordingAuthorizer{allowed: []string{"prometheus"}}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "kubelet_running_pods 0\n") })
	srv, err := server.New(server.Config{Certificate: cert, ClientCAs: ca.Pool(), Pods: &podSet{m: nil}, Metrics: metrics, Authorizer: authz})
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

	issue := func(user string, groups ...string) *tls.Certificate {
		c, k, err := ca.IssueClient(user, groups, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return &pair
	}
	for _, tc := range []struct {
		name string
		cert *tls.Certificate
		want int
	}{
		{"no certificate", nil, http.StatusUnauthorized},
		{"a user without nodes/metrics", issue("alice", "dev"), http.StatusForbidden},
		{"a user with nodes/metrics", issue("prometheus", "monitoring"), http.StatusOK},
		{"a cluster admin", issue("root", "system:masters"), http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the kubelet's self-signed certificate
			if tc.cert != nil {
				cfg.Certificates = []tls.Certificate{*tc.cert}
			}
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
			resp, err := hc.Get("https://" + l.Addr().String() + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || (tc.want == http.StatusOK) != strings.Contains(string(b), "kubelet_running_pods") {
				t.Errorf("GET /metrics: %d %q, want %d", resp.StatusCode, b, tc.want)
			}
		})
	}
	authz.mu.Lock()
	defer authz.mu.Unlock()
	if want := []string{"alice get nodes/metrics", "prometheus get nodes/metrics"}; strings.Join(authz.asked, ",") != strings.Join(want, ",") {
		t.Errorf("the authorizer was asked %q, want %q", authz.asked, want)
	}
}
