package deployment_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkDeploymentsAvailable creates MINIK8S_BENCH_DEPLOYMENTS (1,000)
// Deployments of MINIK8S_BENCH_REPLICAS (10) replicas against a real
// apiserver, with a simulated kubelet binding pods to fake nodes and
// marking them Running and Ready, and measures the time until every
// Deployment is Available and rolled out. The controller-manager runs as
// its own process (the real binary, --controllers=replicaset,deployment,
// --kube-api-qps MINIK8S_BENCH_QPS, default 1000, and
// --concurrent-{replicaset,deployment}-syncs MINIK8S_BENCH_WORKERS, default
// kube's 5) so its CPU time and
// memory, read from its /metrics, are its own.
func BenchmarkDeploymentsAvailable(b *testing.B) {
	deployments := envInt("MINIK8S_BENCH_DEPLOYMENTS", 1000)
	replicas := envInt("MINIK8S_BENCH_REPLICAS", 10)
	qps := envInt("MINIK8S_BENCH_QPS", 1000)
	workers := envInt("MINIK8S_BENCH_WORKERS", 5) // kube's --concurrent-*-syncs default

	cl := startCluster(b)
	cl.runKubelet(100, 0, 64)
	bin := daemontest.Build(b, "github.com/minik8s/minik8s/controller-manager")
	port := daemontest.FreePort(b)
	daemontest.Start(b, bin, "--master", cl.srv.URL(), "--controllers", "replicaset,deployment",
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--port", strconv.Itoa(port),
		"--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", strconv.Itoa(2*qps), "--v", "warn",
		"--concurrent-replicaset-syncs", strconv.Itoa(workers), "--concurrent-deployment-syncs", strconv.Itoa(workers))
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	waitFor(b, 30*time.Second, "controller-manager /metrics", func() (bool, error) {
		_, err := daemontest.Scrape(metricsURL)
		return err == nil, err
	})

	b.ResetTimer()
	var total time.Duration
	for i := range b.N {
		ns := fmt.Sprintf("bench-%d", i)
		createNamespace(b, cl.c, ns)
		before, err := daemontest.Scrape(metricsURL)
		if err != nil {
			b.Fatal(err)
		}
		var peakHeap atomic.Int64
		sampleCtx, stopSampling := context.WithCancel(context.Background())
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for sampleCtx.Err() == nil {
				if m, err := daemontest.Scrape(metricsURL); err == nil {
					if h := int64(m["go_memstats_heap_inuse_bytes"]); h > peakHeap.Load() {
						peakHeap.Store(h)
					}
				}
				select {
				case <-sampleCtx.Done():
				case <-time.After(500 * time.Millisecond):
				}
			}
		}()

		start := time.Now()
		createDeployments(b, cl.c, ns, deployments, int32(replicas))
		created := time.Since(start)
		// Poll once a second: listing 1,000 objects more often would load
		// the apiserver the benchmark measures.
		var podsCreated time.Duration
		for deadline := start.Add(25 * time.Minute); ; time.Sleep(time.Second) {
			if time.Now().After(deadline) {
				b.Fatalf("deployments not available after 25 minutes")
			}
			if podsCreated == 0 {
				rss, err := client.Resource[api.ReplicaSet](cl.c).Namespace(ns).List(context.Background(), client.ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for _, rs := range rss.Items {
					n += int(rs.Status.Replicas)
				}
				if n == deployments*replicas {
					podsCreated = time.Since(start)
				}
			}
			l, err := client.Resource[api.Deployment](cl.c).Namespace(ns).List(context.Background(), client.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			done := 0
			for j := range l.Items {
				d := &l.Items[j]
				if c := condition(d, api.DeploymentAvailable); c != nil && c.Status == api.ConditionTrue && deploymentDone(d) {
					done++
				}
			}
			if done == deployments {
				break
			}
		}
		elapsed := time.Since(start)
		total += elapsed
		stopSampling()
		<-sampled
		after, err := daemontest.Scrape(metricsURL)
		if err != nil {
			b.Fatal(err)
		}
		pods := len(cl.livePods(ns))
		if pods != deployments*replicas {
			b.Errorf("%d pods, want %d", pods, deployments*replicas)
		}
		cpu := after["process_cpu_seconds_total"] - before["process_cpu_seconds_total"]
		b.ReportMetric(elapsed.Seconds(), "s-to-available")
		b.ReportMetric(podsCreated.Seconds(), "s-to-pods-created")
		b.ReportMetric(cpu, "cm-cpu-s")
		b.ReportMetric(float64(peakHeap.Load())/(1<<20), "cm-peak-heap-MiB")
		b.ReportMetric(after["process_resident_memory_bytes"]/(1<<20), "cm-rss-MiB")
		b.ReportMetric(float64(pods)/elapsed.Seconds(), "pods/s")
		b.Logf("%d deployments x %d replicas: created in %v, every pod created and counted after %v, all available after %v; controller-manager CPU %.1fs, peak heap in use %.0f MiB, RSS %.0f MiB, syncs: replicaset %.0f, deployment %.0f",
			deployments, replicas, created.Round(time.Millisecond), podsCreated.Round(time.Millisecond), elapsed.Round(time.Millisecond), cpu,
			float64(peakHeap.Load())/(1<<20), after["process_resident_memory_bytes"]/(1<<20),
			after[`controller_sync_total{controller="replicaset",result="success"}`]-before[`controller_sync_total{controller="replicaset",result="success"}`],
			after[`controller_sync_total{controller="deployment",result="success"}`]-before[`controller_sync_total{controller="deployment",result="success"}`])
	}
	b.ReportMetric(0, "ns/op") // the wall time of an iteration is s-to-available
}

func createDeployments(b *testing.B, c *client.Client, ns string, n int, replicas int32) {
	b.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				d := newDeployment(ns, fmt.Sprintf("app-%04d", i), replicas, "img:1")
				if _, err := client.Resource[api.Deployment](c).Namespace(ns).Create(context.Background(), d); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}
