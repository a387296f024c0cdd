package hollow_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// BenchmarkHollowNodesStartup runs the binaries as they are deployed: an
// apiserver process (max-in-flight limits off, so the figure is not its
// 429s under a registration storm) and a hollow-nodes process with
// MINIK8S_HOLLOW_NODES nodes (default 1000). It reports the time until
// hollow-nodes reports every node Ready, then, after 15 s at the real
// cadences, the RSS of both processes and hollow-nodes' RSS per node.
// Each iteration starts both afresh (run it with -benchtime=1x):
//
//	go test -run '^$' -bench HollowNodesStartup -benchtime=1x ./kubelet/hollow/
func BenchmarkHollowNodesStartup(b *testing.B) {
	if testing.Short() {
		b.Skip("starts an apiserver and thousands of hollow nodes (skipped with -short)")
	}
	count := 1000
	if v := os.Getenv("MINIK8S_HOLLOW_NODES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("MINIK8S_HOLLOW_NODES=%q", v)
		}
		count = n
	}
	apiserverBin := daemontest.Build(b, "github.com/minik8s/minik8s/apiserver")
	hollowBin := daemontest.Build(b, "github.com/minik8s/minik8s/internal/cmd/hollow-nodes")
	for b.Loop() {
		dir := b.TempDir()
		ln := daemontest.Listen(b)
		kcPath := filepath.Join(dir, "admin.kubeconfig")
		apiserver := daemontest.StartInheriting(b, apiserverBin, []*net.TCPListener{ln},
			"--data-dir", filepath.Join(dir, "etcd"), "--cert-dir", filepath.Join(dir, "pki"),
			"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", daemontest.Port(ln),
			"--write-kubeconfig", kcPath, "--max-requests-inflight", "0", "--max-mutating-requests-inflight", "0")
		waitAPIServer(b, kcPath)
		health := daemontest.Listen(b)
		start := time.Now()
		hn := daemontest.StartInheriting(b, hollowBin, []*net.TCPListener{health},
			"--kubeconfig", kcPath, "--count", strconv.Itoa(count), "--root-dir", filepath.Join(dir, "hollow"),
			"--health-addr", "127.0.0.1:"+daemontest.Port(health))
		url := "http://127.0.0.1:" + daemontest.Port(health) + "/metrics"
		deadline := time.Now().Add(15 * time.Minute)
		for {
			m, err := daemontest.Scrape(url)
			if err == nil && int(m["hollow_nodes_ready"]) == count {
				break
			}
			select {
			case <-hn.Done():
				b.Fatalf("hollow-nodes exited: %s (log %s)", hn.ExitStatus(), hn.LogPath)
			default:
			}
			if time.Now().After(deadline) {
				b.Fatalf("hollow nodes not all Ready after 15 minutes: %v (%v)", m["hollow_nodes_ready"], err)
			}
			time.Sleep(500 * time.Millisecond)
		}
		ready := time.Since(start)
		time.Sleep(15 * time.Second)
		hnRSS, apiRSS := rssOf(hn.Cmd.Process.Pid), rssOf(apiserver.Cmd.Process.Pid)
		b.ReportMetric(ready.Seconds(), "s-to-all-ready")
		b.ReportMetric(float64(hnRSS)/(1<<20), "hollow-RSS-MiB")
		b.ReportMetric(float64(hnRSS)/float64(count)/1024, "hollow-RSS-KiB/node")
		b.ReportMetric(float64(apiRSS)/(1<<20), "apiserver-RSS-MiB")
	}
}

// waitAPIServer waits for the apiserver to write its admin kubeconfig
// and answer /readyz.
func waitAPIServer(b *testing.B, kcPath string) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := func() error {
			kc, err := kubeconfig.Load(kcPath)
			if err != nil {
				return err
			}
			cfg, err := kc.ClientConfig("")
			if err != nil {
				return err
			}
			c, err := client.New(cfg)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err = c.Do(ctx, client.Request{Path: "/readyz"})
			return err
		}()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("apiserver not ready: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rssOf is process pid's resident set (VmRSS), 0 if unknown.
func rssOf(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
