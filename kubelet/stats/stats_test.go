package stats

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

type fakeLister []Container

func (f fakeLister) RunningContainers(context.Context) ([]Container, error) { return f, nil }

// writeV1 lays out the files of cgroup path in a v1 tree under root.
func writeV1(t *testing.T, root, path string, cpuNanos, usage, inactive uint64) {
	t.Helper()
	files := map[string]string{
		filepath.Join(root, "cpuacct", path, "cpuacct.usage"):        itoa(cpuNanos),
		filepath.Join(root, "memory", path, "memory.usage_in_bytes"): itoa(usage),
		filepath.Join(root, "memory", path, "memory.limit_in_bytes"): "9223372036854771712",
		filepath.Join(root, "memory", path, "memory.stat"):           "cache 10\ntotal_inactive_file " + itoa(inactive) + "\ntotal_rss 4096\ntotal_pgfault 7\ntotal_pgmajfault 1\n",
		filepath.Join(root, "pids", path, "pids.current"):            "3",
	}
	for p, v := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func TestSummaryAndResourceMetrics(t *testing.T) {
	root := t.TempDir()
	started := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	cs := fakeLister{
		{ID: "sb1", PodUID: "u1", PodNamespace: "default", PodName: "web", Sandbox: true, StartedAt: started},
		{ID: "c1", PodUID: "u1", PodNamespace: "default", PodName: "web", Name: "main", StartedAt: started.Add(time.Second)},
		// Exited between listing and reading: no cgroup, left out.
		{ID: "gone", PodUID: "u1", PodNamespace: "default", PodName: "web", Name: "side", StartedAt: started},
	}
	writeV1(t, root, "/", 50e9, 2e9, 5e8)
	writeV1(t, root, "/mk/podu1", 3e9, 30e6, 10e6)
	writeV1(t, root, "/mk/podu1/c1", 2e9, 20e6, 5e6)
	now := started.Add(time.Minute)
	p, err := New(Config{NodeName: "n1", CgroupParent: "/mk", CgroupRoot: root, Containers: cs, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Node.NodeName != "n1" || *s.Node.CPU.UsageCoreNanoSeconds != 50e9 || *s.Node.Memory.WorkingSetBytes != 15e8 {
		t.Errorf("node %+v cpu %+v mem %+v", s.Node, s.Node.CPU, s.Node.Memory)
	}
	if s.Node.CPU.UsageNanoCores != nil {
		t.Errorf("a rate on the first reading: %d", *s.Node.CPU.UsageNanoCores)
	}
	if len(s.Pods) != 1 || len(s.Pods[0].Containers) != 1 {
		t.Fatalf("pods %+v", s.Pods)
	}
	pod := s.Pods[0]
	if pod.PodRef != (PodReference{Name: "web", Namespace: "default", UID: "u1"}) || !pod.StartTime.Equal(started) ||
		*pod.Memory.WorkingSetBytes != 20e6 || *pod.ProcessStats.ProcessCount != 3 {
		t.Errorf("pod %+v", pod)
	}
	c := pod.Containers[0]
	if c.Name != "main" || *c.CPU.UsageCoreNanoSeconds != 2e9 || *c.Memory.WorkingSetBytes != 15e6 || *c.Memory.UsageBytes != 20e6 {
		t.Errorf("container %+v", c)
	}

	// Two seconds later the container used one more CPU-second: half a core.
	now = now.Add(2 * time.Second)
	writeV1(t, root, "/mk/podu1/c1", 3e9, 20e6, 5e6)
	s, err = p.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Pods[0].Containers[0].CPU.UsageNanoCores; r == nil || *r != 5e8 {
		t.Errorf("usageNanoCores = %v, want 500000000", r)
	}
	var b strings.Builder
	if err := writeResourceMetrics(&b, s); err != nil {
		t.Fatal(err)
	}
	ms := now.UnixMilli()
	want := `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="main",namespace="default",pod="web"} 3 ` + itoa(uint64(ms)) + `
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="main",namespace="default",pod="web"} 1.5e+07 ` + itoa(uint64(ms)) + `
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="main",namespace="default",pod="web"} 1.796292001e+09
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 50 ` + itoa(uint64(ms)) + `
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.5e+09 ` + itoa(uint64(ms)) + `
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="default",pod="web"} 3 ` + itoa(uint64(ms)) + `
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="default",pod="web"} 2e+07 ` + itoa(uint64(ms)) + `
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`
	if b.String() != want {
		t.Errorf("metrics:\n%s\nwant:\n%s", b.String(), want)
	}

	// A failed summary is a scrape error, nothing else.
	b.Reset()
	_ = writeResourceMetrics(&b, nil)
	if !strings.HasSuffix(b.String(), "resource_scrape_error 1\n") || strings.Contains(b.String(), "node_") {
		t.Errorf("failed scrape:\n%s", b.String())
	}
}
