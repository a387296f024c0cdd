package metricsserver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/aggregator/aggregatortest"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/metricsserver"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/cmd/root"
)

// fakeKubelet serves /metrics/resource for constant usage: CPU counters
// rise at the given rate (cores) from start, working sets are fixed.
type fakeKubelet struct {
	nodeCores  float64
	nodeMemory int64
	containers []fakeContainer
	start      time.Time
}

type fakeContainer struct {
	namespace, pod, container string
	cores                     float64
	memory                    int64
}

func (k *fakeKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics/resource" || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	now := time.Now()
	ms := now.UnixMilli()
	// The counters advance with the reported (millisecond) timestamps, so
	// the rates between two readings are exact.
	secs := float64(ms-k.start.UnixMilli()) / 1000
	var b strings.Builder
	b.WriteString("# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds\n# TYPE container_cpu_usage_seconds_total counter\n")
	for _, c := range k.containers {
		fmt.Fprintf(&b, "container_cpu_usage_seconds_total{container=%q,namespace=%q,pod=%q} %g %d\n", c.container, c.namespace, c.pod, c.cores*secs, ms)
	}
	for _, c := range k.containers {
		fmt.Fprintf(&b, "container_memory_working_set_bytes{container=%q,namespace=%q,pod=%q} %d %d\n", c.container, c.namespace, c.pod, c.memory, ms)
		fmt.Fprintf(&b, "container_start_time_seconds{container=%q,namespace=%q,pod=%q} %d\n", c.container, c.namespace, c.pod, k.start.Unix())
	}
	fmt.Fprintf(&b, "node_cpu_usage_seconds_total %g %d\nnode_memory_working_set_bytes %d %d\nresource_scrape_error 0\n", k.nodeCores*secs, ms, k.nodeMemory, ms)
	_, _ = w.Write([]byte(b.String()))
}

// TestTop runs the metrics server against two fake kubelets, registers it
// as the metrics.k8s.io APIService of a real apiserver, and reads it with
// the real kubectl top: the figures are the kubelets' rates.
func TestTop(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	c := s.AdminClient(t)
	start := time.Now()
	kubelets := map[string]*fakeKubelet{
		"node-a": {nodeCores: 0.5, nodeMemory: 1 << 30, start: start, containers: []fakeContainer{
			{"default", "web-1", "app", 0.25, 64 << 20}, {"default", "web-1", "sidecar", 0.002, 8 << 20},
			{"kube-system", "dns", "dns", 0.005, 20 << 20}}},
		"node-b": {nodeCores: 1.5, nodeMemory: 3 << 30, start: start, containers: []fakeContainer{
			{"default", "web-2", "app", 1.2, 300 << 20}}},
	}
	for name, k := range kubelets {
		srv := httptest.NewUnstartedServer(k)
		srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		p, _ := strconv.Atoi(port)
		n := &api.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"pool": "main"}}, Status: api.NodeStatus{
			Capacity:        api.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("4Gi")},
			Allocatable:     api.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("4Gi")},
			Addresses:       []api.NodeAddress{{Type: api.NodeInternalIP, Address: "127.0.0.1"}},
			DaemonEndpoints: api.NodeDaemonEndpoints{KubeletEndpoint: api.DaemonEndpoint{Port: int32(p)}}}}
		if _, err := client.Resource[api.Node](c).Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		for _, ct := range k.containers {
			pc := client.Resource[api.Pod](c).Namespace(ct.namespace)
			if _, err := pc.Get(ctx, ct.pod); err == nil {
				continue
			}
			var containers []api.Container
			for _, o := range k.containers {
				if o.pod == ct.pod {
					containers = append(containers, api.Container{Name: o.container, Image: "busybox"})
				}
			}
			if _, err := pc.Create(ctx, &api.Pod{ObjectMeta: api.ObjectMeta{Name: ct.pod, Namespace: ct.namespace, Labels: map[string]string{"app": ct.pod}},
				Spec: api.PodSpec{NodeName: name, Containers: containers}}); err != nil {
				t.Fatal(err)
			}
		}
	}

	cm, err := client.Resource[api.ConfigMap](c).Namespace("kube-system").Get(ctx, "extension-apiserver-authentication")
	if err != nil {
		t.Fatal(err)
	}
	front := x509.NewCertPool()
	front.AppendCertsFromPEM([]byte(cm.Data["requestheader-client-ca-file"]))
	authn, err := metricsserver.LoadRequestHeader(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	kcert, err := tls.X509KeyPair(s.PKI().AdminCertPEM, s.PKI().AdminKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := metricsserver.New(metricsserver.Config{Client: c, Resolution: 500 * time.Millisecond, Authn: authn,
		KubeletTLS: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{kcert}}, Logger: apiservertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ms.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// No metrics API yet: both say so.
	kubectl := oracle.Path(t, "kubectl")
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "--cache-dir", t.TempDir(), "top", "nodes").CombinedOutput()
	var noAPI strings.Builder
	code := root.Run(ctx, cli.Streams{Out: io.Discard, ErrOut: &noAPI}, []string{"--kubeconfig", s.Options.WriteKubeconfig, "top", "nodes"})
	if err == nil || string(out) != "error: Metrics API not available\n" || code != 1 || noAPI.String() != string(out) {
		t.Errorf("top without a metrics API: kubectl %v %q; kubectl-lite %d %q", err, out, code, noAPI.String())
	}

	backend := aggregatortest.Start(t, ctx, c, aggregatortest.Options{Group: "metrics.k8s.io", Version: "v1beta1", Service: "metrics-server",
		ClientCAs: front, Handler: ms.Handler()})
	aggregatortest.WaitCondition(t, ctx, c, backend.Name, api.ConditionTrue, "Passed")

	// Directly, without the front proxy's certificate: 401.
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: backend.CA.Pool(), ServerName: "metrics-server.kube-system.svc"}}}
	resp, err := direct.Get(backend.Server.URL + "/apis/metrics.k8s.io/v1beta1/nodes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unauthenticated request: %d", resp.StatusCode)
	}

	cache := t.TempDir()
	run := func(args ...string) string {
		out, err := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", s.Options.WriteKubeconfig, "--cache-dir", cache}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// Two scrapes make a rate; kubectl top looks for the group in
	// discovery, which follows the APIService's availability.
	for {
		b, err := c.Do(ctx, client.Request{Path: "/apis/metrics.k8s.io/v1beta1/pods"})
		groups, gerr := c.Do(ctx, client.Request{Path: "/apis"})
		if err == nil && strings.Count(string(b), `"window"`) == 3 && gerr == nil && strings.Contains(string(groups), `"metrics.k8s.io/v1beta1"`) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no pod metrics: %v %s; discovery: %v %s", err, b, gerr, groups)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "nodes"}, "NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%)\nnode-a 500m 25% 1024Mi 25%\nnode-b 1500m 75% 3072Mi 75%"},
		{[]string{"top", "pods"}, "NAME CPU(cores) MEMORY(bytes)\nweb-1 252m 72Mi\nweb-2 1200m 300Mi"},
		{[]string{"top", "pods", "-A", "--sort-by=memory"}, "NAMESPACE NAME CPU(cores) MEMORY(bytes)\ndefault web-2 1200m 300Mi\ndefault web-1 252m 72Mi\nkube-system dns 5m 20Mi"},
		{[]string{"top", "pod", "web-1", "--containers"}, "POD NAME CPU(cores) MEMORY(bytes)\nweb-1 app 250m 64Mi\nweb-1 sidecar 2m 8Mi"},
		{[]string{"top", "pods", "-l", "app=web-2"}, "NAME CPU(cores) MEMORY(bytes)\nweb-2 1200m 300Mi"},
		{[]string{"top", "node", "node-b", "--no-headers"}, "node-b 1500m 75% 3072Mi 75%"},
		{[]string{"top", "nodes", "--sort-by=cpu", "-l", "pool=main"}, "NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%)\nnode-b 1500m 75% 3072Mi 75%\nnode-a 500m 25% 1024Mi 25%"},
		{[]string{"top", "pods", "-A", "--containers", "--sum"}, "NAMESPACE POD NAME CPU(cores) MEMORY(bytes)\ndefault web-1 app 250m 64Mi\ndefault web-1 sidecar 2m 8Mi\ndefault web-2 app 1200m 300Mi\nkube-system dns dns 5m 20Mi\n________ ________\n1457m 392Mi"},
	} {
		out := run(tc.args...)
		// kubectl-lite prints the same bytes.
		var lout, lerr strings.Builder
		if code := root.Run(ctx, cli.Streams{Out: &lout, ErrOut: &lerr}, append([]string{"--kubeconfig", s.Options.WriteKubeconfig}, tc.args...)); code != 0 || lout.String() != out {
			t.Errorf("kubectl-lite %s: exit %d %s\n%q\nkubectl printed\n%q", strings.Join(tc.args, " "), code, lerr.String(), lout.String(), out)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
		if got := strings.Join(lines, "\n"); got != tc.want {
			t.Errorf("kubectl %s:\n%s\nwant (spacing aside):\n%s", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "top", "pod", "nope").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `podmetrics.metrics.k8s.io "default/nope" not found`) {
		t.Errorf("kubectl top pod nope: %v %s", err, out)
	}
	var lerr strings.Builder
	if code := root.Run(ctx, cli.Streams{Out: io.Discard, ErrOut: &lerr}, []string{"--kubeconfig", s.Options.WriteKubeconfig, "top", "pod", "nope"}); code != 1 || lerr.String() != string(out) {
		t.Errorf("kubectl-lite top pod nope: exit %d %q, kubectl printed %q", code, lerr.String(), out)
	}
}

// TestAddonManifest: the add-on's manifest is accepted by the real
// kubectl's validation and the apiserver (server-side dry run), and its
// container arguments by the metrics server's flags.
func TestAddonManifest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	kubectl := oracle.Path(t, "kubectl")
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", s.Options.WriteKubeconfig, "apply", "--dry-run=server",
		"-f", "../../deploy/metrics-server/metrics-server.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server: %v\n%s", err, out)
	}
	for _, want := range []string{"serviceaccount/metrics-server created (server dry run)", "deployment.apps/metrics-server created (server dry run)",
		"apiservice.apiregistration.k8s.io/v1beta1.metrics.k8s.io created (server dry run)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl apply output lacks %q:\n%s", want, out)
		}
	}
	// The Deployment's arguments, as the binary parses and checks them.
	opts := metricsserver.DefaultOptions()
	fss := &daemon.FlagSets{}
	opts.AddFlags(fss)
	if err := fss.Parse([]string{"--secure-port=10251", "--metric-resolution=15s", "--kubelet-insecure-tls"}); err != nil {
		t.Fatal(err)
	}
	if err := opts.Validate(); err != nil {
		t.Errorf("the add-on's arguments: %v", err)
	}
	if args, _ := os.ReadFile("../../deploy/metrics-server/metrics-server.yaml"); !strings.Contains(string(args), "- --secure-port=10251\n            - --metric-resolution=15s\n") {
		t.Error("the manifest's arguments are not the ones checked here")
	}
}
