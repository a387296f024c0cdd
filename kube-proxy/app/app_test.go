package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/prometheus/client_golang/prometheus"
)

// TestFlags: kube-proxy's names and defaults; a bad value names its flag.
func TestFlags(t *testing.T) {
	t.Parallel()
	o := DefaultOptions()
	fss := &daemon.FlagSets{}
	o.AddFlags(fss)
	if err := fss.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.HealthzBindAddress != "0.0.0.0:10256" || o.MetricsBindAddress != "127.0.0.1:10249" || o.MinSyncPeriod != time.Second ||
		o.SyncPeriod != 30*time.Second || !o.RunFirewall || !o.PodRoutes || o.mode() != "iptables" {
		t.Errorf("defaults: %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--proxy-mode=ipvs"}},
		{[]string{"--cluster-cidr=garbage"}},
		{[]string{"--iptables-min-sync-period=-1s"}},
		{[]string{"--iptables-sync-period=0"}},
		{[]string{"--healthz-bind-address=10256"}},
		{[]string{"--metrics-bind-address=localhost:10249"}},
		{[]string{"--hostname-override=Bad_Name"}},
	} {
		o := DefaultOptions()
		fss := &daemon.FlagSets{}
		o.AddFlags(fss)
		if err := fss.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		flag, _, _ := strings.Cut(strings.TrimPrefix(tc.args[0], "--"), "=")
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("%v: %v, want an error naming --%s", tc.args, err, flag)
		}
	}
	o = DefaultOptions()
	o.HostnameOverride = " Node-A "
	if n, err := o.NodeName(); err != nil || n != "node-a" {
		t.Errorf("NodeName = %q, %v; want node-a", n, err)
	}
}

// TestLoops: the service proxy, and beside it by default the NetworkPolicy
// enforcer (--run-firewall, kube-router's flag) and the pod routes;
// --run-firewall=false removes the enforcer's rules instead.
func TestLoops(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"service proxy", "proxy health", "network policy", "pod routes"}},
		{[]string{"--run-firewall=false", "--pod-routes=false"}, []string{"service proxy", "proxy health", "network policy cleanup"}},
		{[]string{"--proxy-mode=nftables"}, []string{"service proxy", "proxy health", "network policy", "pod routes"}},
	} {
		o := DefaultOptions()
		fss := &daemon.FlagSets{}
		o.AddFlags(fss)
		if err := fss.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		ls, _, err := o.loops(nil, "node-a", daemon.NewServer("", slog.Default()), slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range ls {
			got = append(got, l.name)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%v: loops %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestCredentials: the pod routes list every Node and the enforcer every
// Pod, Namespace and NetworkPolicy, which the Node authorizer refuses a
// kubelet; kube-proxy's credentials (system:kube-proxy, the kubeconfig the
// apiserver writes) may.
func TestCredentials(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clientFor := func(path string) *client.Client {
		t.Helper()
		o := DefaultOptions()
		o.Client.Kubeconfig = path
		c, err := o.Client.Client("kube-proxy")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := clientFor(s.PKI().Path("kube-proxy.kubeconfig"))
	if _, err := client.Resource[api.Node](c).List(ctx, client.ListOptions{}); err != nil {
		t.Errorf("kube-proxy lists nodes: %v", err)
	}
	if _, err := client.Resource[api.NetworkPolicy](c).List(ctx, client.ListOptions{}); err != nil {
		t.Errorf("kube-proxy lists network policies: %v", err)
	}
	if _, err := client.Resource[api.Namespace](c).List(ctx, client.ListOptions{}); err != nil {
		t.Errorf("kube-proxy lists namespaces: %v", err)
	}
	if _, err := client.Resource[api.Pod](c).List(ctx, client.ListOptions{}); err != nil {
		t.Errorf("kube-proxy lists pods: %v", err)
	}
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("system:node:n1", []string{"system:nodes"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfig.Write(path, kubeconfig.NewForCluster(s.SecureURL(), s.PKI().CA.CertPEM(), "system:node:n1",
		kubeconfig.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource[api.Node](clientFor(path)).List(ctx, client.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a kubelet lists nodes: %v, want forbidden", err)
	}
}

// TestHealth: /healthz and /livez as kube-proxy answers them: healthy
// until a queued change waits longer than the timeout; /healthz also
// needs this node to exist, not being deleted or tainted for removal.
func TestHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "node-a"}}
	h := newProxyHealth(time.Minute, func() *api.Node { return node })
	h.now = func() time.Time { return now }
	get := func(path string) (int, healthBody) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var b healthBody
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		return rec.Code, b
	}
	if code, b := get("/healthz"); code != http.StatusOK || !b.Healthy || b.NodeEligible == nil || !*b.NodeEligible {
		t.Errorf("at start: %d %+v", code, b)
	}
	h.Updated()
	h.QueuedUpdate()
	now = now.Add(59 * time.Second)
	if code, _ := get("/livez"); code != http.StatusOK {
		t.Errorf("queued 59s: %d", code)
	}
	now = now.Add(2 * time.Second)
	if code, b := get("/livez"); code != http.StatusServiceUnavailable || b.Healthy || b.Status["IPv4"].Healthy {
		t.Errorf("queued 61s: %d %+v", code, b)
	}
	h.Updated()
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("after the write: %d", code)
	}
	node.Spec.Taints = []api.Taint{{Key: toBeDeletedTaint, Effect: "NoSchedule"}}
	if code, b := get("/healthz"); code != http.StatusServiceUnavailable || b.NodeEligible == nil || *b.NodeEligible {
		t.Errorf("tainted node, /healthz: %d %+v", code, b)
	}
	if code, _ := get("/livez"); code != http.StatusOK {
		t.Errorf("tainted node, /livez: %d", code)
	}
}

// TestSyncWatcher: the proxy's write counter is found among what it
// registers, and its value read.
func TestSyncWatcher(t *testing.T) {
	t.Parallel()
	w := &syncWatcher{Registerer: prometheus.NewRegistry()}
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "something_else_total", Help: "x"})
	ctr := prometheus.NewCounter(prometheus.CounterOpts{Name: syncCounterName, Help: "x"})
	w.MustRegister(other, ctr)
	other.Inc()
	if n := w.writes(); n != 0 {
		t.Errorf("writes = %v before any", n)
	}
	ctr.Add(2)
	if n := w.writes(); n != 2 {
		t.Errorf("writes = %v, want 2", n)
	}
}
