package scalerun

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/kubelet/hollow"
)

// TestRampFlags: each hollow-nodes process gets its share of the run's
// start ramp; the default passes no flag (hollow-nodes' own default), a
// negative concurrency starts every node at once.
func TestRampFlags(t *testing.T) {
	if hollowDefaultStartConcurrency != hollow.DefaultStartConcurrency {
		t.Errorf("hollowDefaultStartConcurrency %d, hollow-nodes' default %d", hollowDefaultStartConcurrency, hollow.DefaultStartConcurrency)
	}
	for _, tt := range []struct {
		conc  int
		qps   float64
		count int
		want  string
	}{
		{0, 0, 4000, "--start-concurrency=80"},
		{0, 0, 1000, "--start-concurrency=20"},
		{-1, 0, 4000, "--start-concurrency=0"},
		{100, 0, 4000, "--start-concurrency=80"},
		{100, 0, 1000, "--start-concurrency=20"},
		{100, 50, 1000, "--start-concurrency=20 --start-qps=10"},
		{3, 0, 1000, "--start-concurrency=1"},
		{0, 25, 4000, "--start-concurrency=80 --start-qps=20"},
	} {
		cfg := Config{Nodes: 5000, LoseNodes: 1000, StartConcurrency: tt.conc, StartQPS: tt.qps}
		if got := strings.Join(rampFlags(cfg, tt.count), " "); got != tt.want {
			t.Errorf("concurrency %d, qps %v, %d of 5000 nodes: %q, want %q", tt.conc, tt.qps, tt.count, got, tt.want)
		}
	}
}

// TestParseP99 reads a histogram as Prometheus' histogram_quantile would:
// linear within the bucket the 99th percentile falls in, every resource of
// a verb together, WATCH left out.
func TestParseP99(t *testing.T) {
	in := `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{verb="GET",group="",resource="pods",subresource="",le="0.1"} 90
apiserver_request_duration_seconds_bucket{verb="GET",group="",resource="pods",subresource="",le="0.2"} 100
apiserver_request_duration_seconds_bucket{verb="GET",group="",resource="pods",subresource="",le="+Inf"} 100
apiserver_request_duration_seconds_bucket{verb="GET",group="",resource="nodes",subresource="",le="0.1"} 100
apiserver_request_duration_seconds_bucket{verb="GET",group="",resource="nodes",subresource="",le="0.2"} 100
apiserver_request_duration_seconds_bucket{verb="GET",group="",resource="nodes",subresource="",le="+Inf"} 100
apiserver_request_duration_seconds_bucket{verb="WATCH",group="",resource="pods",subresource="",le="+Inf"} 7
`
	p99, n, err := parseP99(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	// 200 GETs, rank 198: between 190 (le 0.1) and 200 (le 0.2).
	if n["GET"] != 200 || math.Abs(p99["GET"]-0.18) > 1e-9 {
		t.Errorf("GET: %v requests, p99 %v; want 200, 0.18", n["GET"], p99["GET"])
	}
	if _, ok := n["WATCH"]; ok {
		t.Error("WATCH counted")
	}
}

// TestSmallScaleRun is the whole run at a small scale on the real binaries
// of bin/ (make build): 20 hollow nodes, 4 of them lost, 4 Deployments x 10
// replicas (the scheduler spreads them, so the lost nodes hold some);
// every milestone must be reached.
func TestSmallScaleRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the control plane and hollow nodes")
	}
	bin := binDir(t)
	cfg := Config{BinDir: bin, WorkDir: t.TempDir(), Nodes: 20, LoseNodes: 4, Deployments: 4, Replicas: 10,
		TolerationSeconds: 5, NodeEvictionRate: 10, Milestone: 4 * time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	Write(&out, cfg, res)
	t.Logf("\n%s", out.String())
	if len(res.Milestones) != 6 {
		t.Errorf("%d milestones, want 6", len(res.Milestones))
	}
	if res.LostPods == 0 {
		t.Error("no pods on the lost nodes: nothing was evicted")
	}
	if res.Requests["POST"] == 0 || res.P99["POST"] <= 0 {
		t.Errorf("no POST latency read from /metrics: %v %v", res.Requests, res.P99)
	}
	if len(res.Processes) != 5 {
		t.Errorf("%d processes measured, want 5", len(res.Processes))
	}
	for _, p := range res.Processes {
		if p.CPUSeconds <= 0 || p.PeakMiB <= 0 {
			t.Errorf("process %s: %.1f CPU s, %.0f MiB peak", p.Name, p.CPUSeconds, p.PeakMiB)
		}
	}
}

// TestFailedMilestoneStillReports: a run whose first milestone cannot be
// met in time (a 1 ns bound) fails, and still reports each process' CPU
// seconds and peak RSS, read before the processes stop.
func TestFailedMilestoneStillReports(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the control plane and hollow nodes")
	}
	bin := binDir(t)
	cfg := Config{BinDir: bin, WorkDir: t.TempDir(), Nodes: 4, LoseNodes: 1, Deployments: 1, Replicas: 1, Milestone: time.Nanosecond}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err == nil {
		t.Fatal("the run met a 1 ns milestone")
	}
	if len(res.Milestones) != 0 {
		t.Errorf("%d milestones met, want none", len(res.Milestones))
	}
	if len(res.Processes) != 5 {
		t.Fatalf("%d processes measured after the failed milestone, want 5", len(res.Processes))
	}
	// Read from the live processes (their CPU may still round to 0).
	for _, p := range res.Processes {
		if p.PeakMiB <= 0 {
			t.Errorf("process %s: %.0f MiB peak, want the live process' figure", p.Name, p.PeakMiB)
		}
	}
}

// binDir is the repository's bin/ with the binaries a run starts (make
// build).
func binDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(file), "..", "..", "bin")
	for _, b := range []string{"apiserver", "controller-manager", "scheduler", "hollow-nodes"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("bin/%s is missing (make build): %v", b, err)
		}
	}
	return bin
}
