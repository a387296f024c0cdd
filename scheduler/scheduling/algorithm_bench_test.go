package scheduling

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

// BenchmarkSchedulingCycle measures the scheduler's own work per pod, with
// no apiserver: snapshot update, filters, scores, host selection and the
// assume, over SCHED_BENCH_NODES nodes (default 5,000), as the throughput
// benchmark's pods (100m, 64Mi). Its ns/op is the scheduling loop's share
// of the end-to-end cost.
func BenchmarkSchedulingCycle(b *testing.B) {
	numNodes := schedtest.EnvInt("SCHED_BENCH_NODES", 5000)
	s, err := New(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for i := range numNodes {
		s.Cache.AddNode(schedtest.Node(fmt.Sprintf("node-%05d", i), "4", "32Gi", 110))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := schedtest.CPUTime()
	for i := 0; i < b.N; i++ {
		pod := schedtest.Pod("default", fmt.Sprintf("pod-%d", i), "100m", "64Mi")
		s.Cache.UpdateSnapshot(s.snapshot)
		host, err := s.schedulePod(ctx, framework.NewCycleState(), pod)
		if err != nil {
			b.Fatal(err)
		}
		assumed := *pod
		assumed.Spec.NodeName = host
		if err := s.Cache.AssumePod(&assumed); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64((schedtest.CPUTime()-cpu0).Microseconds())/float64(b.N), "cpu_us/pod")
}
