package hollow_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/hollow"
)

// TestCommandBadFlags: a wrong flag is one line naming it, exit code 2.
func TestCommandBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "0"}, "--count"},
		{[]string{"--name-prefix", "Bad_"}, "--name-prefix"},
		{[]string{"--node-labels", "kubernetes.io/role=x"}, "--node-labels"},
		{[]string{"--capacity", "cpu=lots"}, "--capacity"},
		{[]string{"--qps", "-1"}, "--qps"},
		{[]string{"--start-concurrency", "-1"}, "--start-concurrency"},
		{[]string{"--start-concurrency", "many"}, "--start-concurrency"},
		{[]string{"--start-qps", "-0.5"}, "--start-qps"},
		{[]string{"--start-qps", "NaN"}, "--start-qps"},
		{[]string{"--start-qps", "+Inf"}, "--start-qps"},
		{[]string{"--pod-cidr-base", "10.0.0.0/20", "--count", "100"}, "--pod-cidr-base"},
		{[]string{"--bogus"}, "--bogus"},
	} {
		var stdout, stderr bytes.Buffer
		code := hollow.NewCommand().Execute(tt.args, &stdout, &stderr)
		out := strings.TrimSpace(stderr.String())
		if code != 2 || strings.Count(out, "\n") != 0 || !strings.Contains(out, tt.want) || !strings.HasPrefix(out, "hollow-nodes: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", tt.args, code, out, tt.want)
		}
	}
}

// TestStartFlags: the ramp flags' defaults and accepted values.
func TestStartFlags(t *testing.T) {
	o := hollow.DefaultOptions()
	if o.StartConcurrency != hollow.DefaultStartConcurrency || o.StartQPS != 0 {
		t.Errorf("defaults: --start-concurrency %d, --start-qps %v; want %d, 0", o.StartConcurrency, o.StartQPS, hollow.DefaultStartConcurrency)
	}
	for _, ok := range []struct {
		conc int
		qps  float64
	}{{0, 0}, {1, 0.5}, {500, 50}} {
		o := hollow.DefaultOptions()
		o.StartConcurrency, o.StartQPS = ok.conc, ok.qps
		if err := o.Validate(); err != nil {
			t.Errorf("--start-concurrency %d --start-qps %v: %v", ok.conc, ok.qps, err)
		}
	}
}

// TestDefaultQPS: 2 QPS a node, at least 100, twice that burst; given
// values are kept.
func TestDefaultQPS(t *testing.T) {
	for _, tt := range []struct {
		count     int
		qps       float64
		burst     int
		wantQPS   float64
		wantBurst int
	}{
		{1, 0, 0, 100, 200},
		{100, 0, 0, 200, 400},
		{5000, 0, 0, 10000, 20000},
		{5000, 300, 0, 300, 600},
		{5000, 300, 7, 300, 7},
	} {
		qps, burst := hollow.DefaultQPS(tt.count, tt.qps, tt.burst)
		if qps != tt.wantQPS || burst != tt.wantBurst {
			t.Errorf("DefaultQPS(%d, %v, %d) = %v, %d; want %v, %d", tt.count, tt.qps, tt.burst, qps, burst, tt.wantQPS, tt.wantBurst)
		}
	}
}

// TestRun runs the command's Run as the binary does: 3 nodes through the
// admin kubeconfig, /readyz ready once they are Ready, /metrics counting
// them, and with --delete-nodes-on-exit their Nodes gone after the stop.
func TestRun(t *testing.T) {
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := adminClient(t, s)
	o := hollow.DefaultOptions()
	o.Kubeconfig, o.Count, o.StartIndex, o.NamePrefix = s.Options.WriteKubeconfig, 3, 5, "hn-"
	o.RootDir, o.DeleteNodesOnExit = t.TempDir(), true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.HealthListener, o.HealthAddr = ln, ln.Addr().String()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- hollow.Run(ctx, o, apiservertest.Logger()) }()
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + o.HealthAddr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	poll(t, wctx, "/readyz ready", func() error {
		if code, body := get("/readyz"); code != 200 {
			return fmt.Errorf("/readyz %d: %s", code, body)
		}
		return nil
	})
	if _, body := get("/metrics"); !strings.Contains(body, "hollow_nodes_ready 3") {
		t.Errorf("/metrics lacks hollow_nodes_ready 3")
	}
	nodes := client.Resource[api.Node](admin)
	for _, name := range []string{"hn-5", "hn-6", "hn-7"} {
		n, err := nodes.Get(wctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !nodeReady(n) {
			t.Errorf("%s not Ready", name)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return within 60 s of the stop")
	}
	for _, name := range []string{"hn-5", "hn-6", "hn-7"} {
		if _, err := nodes.Get(context.Background(), name); !apierrors.IsNotFound(err) {
			t.Errorf("node %s after the stop: %v, want NotFound", name, err)
		}
	}
}
