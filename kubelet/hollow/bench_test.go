package hollow_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
	"github.com/minik8s/minik8s/kubelet/hollow"
)

// BenchmarkHollowNodesStartup starts MINIK8S_HOLLOW_NODES (default 1000)
// hollow nodes against an in-process apiserver per iteration (run it with
// -benchtime=1x) and reports the time until all are Ready, the heap they
// hold per node, and the process's RSS (the apiserver's included), with
// the apiserver's max-in-flight limits off.
//
//	go test -run '^$' -bench HollowNodesStartup -benchtime=1x ./kubelet/hollow/
func BenchmarkHollowNodesStartup(b *testing.B) {
	count := 1000
	if v := os.Getenv("MINIK8S_HOLLOW_NODES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("MINIK8S_HOLLOW_NODES=%q", v)
		}
		count = n
	}
	// No max-in-flight limits: the figure is the hollow nodes', not the
	// apiserver's 429s under a registration storm.
	s := apiservertest.Start(b, apiservertest.WithTLS, func(o *app.Options) { o.MaxRequestsInFlight, o.MaxMutatingRequestsInFlight = 0, 0 })
	admin := adminClient(b, s)
	iter := 0
	for b.Loop() {
		iter++
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		fleet, err := hollow.NewFleet(hollow.FleetConfig{
			Client: admin, Count: count, NamePrefix: fmt.Sprintf("bench%d-", iter), RootDir: b.TempDir(),
			Logger: apiservertest.Logger(),
		})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- fleet.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Minute)
		for fleet.ReadyCount() < count {
			if time.Now().After(deadline) {
				cancel()
				b.Fatalf("%d of %d hollow nodes Ready after 10 minutes", fleet.ReadyCount(), count)
			}
			time.Sleep(100 * time.Millisecond)
		}
		ready := time.Since(start)
		// A few Lease renewals at the real 10 s cadence, then the memory.
		time.Sleep(15 * time.Second)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(ready.Seconds(), "s-to-all-ready")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(count)/1024, "heap-KiB/node")
		b.ReportMetric(float64(rssBytes())/(1<<20), "RSS-MiB")
		b.ReportMetric(float64(runtime.NumGoroutine())/float64(count), "goroutines/node")
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// rssBytes is the process's resident set (VmRSS), 0 if unknown.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
