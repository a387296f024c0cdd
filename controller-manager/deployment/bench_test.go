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
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/controller-manager/app"
	"github.com/minik8s/minik8s/internal/benchproc"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// cmRow is one configuration of the controller-manager under test: the
// flags it is started with beyond the harness's, and its options as the
// daemon parses them (for the row's name and its lease).
type cmRow struct {
	name  string
	flags []string
	opts  app.Options
}

// cmRows are the shipped controller-manager (no rate-limit flags: QPS and
// burst are the daemon's own defaults) and a tuned one
// (--kube-api-qps MINIK8S_BENCH_QPS, default 1000, burst twice that), each
// named by the client rate limit it runs with. MINIK8S_BENCH_WORKERS, when
// set, passes --concurrent-{replicaset,deployment}-syncs to both rows.
func cmRows(b *testing.B) []cmRow {
	qps := envInt("MINIK8S_BENCH_QPS", 1000)
	var common []string
	if w := envInt("MINIK8S_BENCH_WORKERS", 0); w > 0 {
		common = []string{"--concurrent-replicaset-syncs=" + strconv.Itoa(w), "--concurrent-deployment-syncs=" + strconv.Itoa(w)}
	}
	var rows []cmRow
	for _, r := range []struct {
		label string
		flags []string
	}{
		{"defaults", common},
		{"tuned", append([]string{"--kube-api-qps=" + strconv.Itoa(qps), "--kube-api-burst=" + strconv.Itoa(2*qps)}, common...)},
	} {
		o := app.DefaultOptions()
		var fss daemon.FlagSets
		o.AddFlags(&fss)
		if err := fss.Parse(r.flags); err != nil {
			b.Fatalf("%s flags %v: %v", r.label, r.flags, err)
		}
		rows = append(rows, cmRow{name: fmt.Sprintf("%s_qps=%g_burst=%d", r.label, o.Client.QPS, o.Client.Burst), flags: r.flags, opts: o})
	}
	return rows
}

// BenchmarkDeploymentsAvailable creates MINIK8S_BENCH_DEPLOYMENTS (1,000)
// Deployments of MINIK8S_BENCH_REPLICAS (10) replicas against a real
// apiserver, with a simulated kubelet binding pods to fake nodes and
// marking them Running and Ready, and measures the time until every
// Deployment is Available and rolled out.
//
// The controller-manager runs as its own process, the real binary as it
// ships: over HTTPS as system:kube-controller-manager with the kubeconfig
// the apiserver wrote, authorized by RBAC, leader election on, only
// --controllers=replicaset,deployment and no metrics port (--secure-port=0: its
// CPU time and memory are read from /proc). It runs in two rows with the
// same workload, each against a fresh apiserver: "defaults" (the daemon's
// own --kube-api-qps and --kube-api-burst) and "tuned" (see cmRows); the
// row name carries the QPS and burst. The harness (deployment creates,
// simulated kubelet, polling) talks to the apiserver's loopback plain-HTTP
// listener, unthrottled.
func BenchmarkDeploymentsAvailable(b *testing.B) {
	bin := daemontest.Build(b, "github.com/minik8s/minik8s/controller-manager")
	for _, row := range cmRows(b) {
		b.Run(row.name, func(b *testing.B) { benchDeploymentsAvailable(b, bin, row) })
	}
}

func benchDeploymentsAvailable(b *testing.B, bin string, row cmRow) {
	deployments := envInt("MINIK8S_BENCH_DEPLOYMENTS", 1000)
	replicas := envInt("MINIK8S_BENCH_REPLICAS", 10)

	cl := startCluster(b, apiservertest.WithTLS)
	cl.runKubelet(100, 0, 64)
	args := append([]string{"--kubeconfig", cl.srv.PKI().Path("controller-manager.kubeconfig"),
		"--controllers", "replicaset,deployment", "--secure-port=0", "--log-level", "warn"}, row.flags...)
	proc := daemontest.Start(b, bin, args...)
	pid := proc.Cmd.Process.Pid
	le := row.opts.LeaderElection
	waitFor(b, 30*time.Second, "the controller-manager to take its lease", func() (bool, error) {
		l, err := client.Resource[api.Lease](cl.c).Namespace(le.ResourceNamespace).Get(context.Background(), le.ResourceName)
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", err
	})

	b.ResetTimer()
	for i := range b.N {
		ns := fmt.Sprintf("bench-%d", i)
		createNamespace(b, cl.c, ns)
		cpu0 := benchproc.CPUSeconds(pid)

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
			if why, lost := leaseLost(cl.c, le); lost {
				b.Fatalf("the controller-manager stopped leading after %v: %s", time.Since(start).Round(time.Second), why)
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
		cpu := benchproc.CPUSeconds(pid) - cpu0
		rssMiB, peakMiB := benchproc.RSSMiB(pid)
		if rssMiB == 0 {
			b.Fatalf("the controller-manager (pid %d) is gone: no /proc/%d/status", pid, pid)
		}
		pods := len(cl.livePods(ns))
		if pods != deployments*replicas {
			b.Errorf("%d pods, want %d", pods, deployments*replicas)
		}
		b.ReportMetric(elapsed.Seconds(), "s-to-available")
		b.ReportMetric(podsCreated.Seconds(), "s-to-pods-created")
		b.ReportMetric(cpu, "cm-cpu-s")
		b.ReportMetric(peakMiB, "cm-peak-rss-MiB")
		b.ReportMetric(rssMiB, "cm-rss-MiB")
		b.ReportMetric(float64(pods)/elapsed.Seconds(), "pods/s")
		b.Logf("%d deployments x %d replicas: created in %v, every pod created and counted after %v, all available after %v; controller-manager CPU %.1fs, RSS %.0f MiB (peak %.0f MiB)",
			deployments, replicas, created.Round(time.Millisecond), podsCreated.Round(time.Millisecond), elapsed.Round(time.Millisecond),
			cpu, rssMiB, peakMiB)
	}
	b.ReportMetric(0, "ns/op") // the wall time of an iteration is s-to-available
}

// leaseLost says whether the leader-election Lease le went unrenewed for
// longer than its duration: its holder no longer leads and reconciles
// nothing (whether or not its process exited).
func leaseLost(c *client.Client, le daemon.LeaderElectionOptions) (string, bool) {
	l, err := client.Resource[api.Lease](c).Namespace(le.ResourceNamespace).Get(context.Background(), le.ResourceName)
	if err != nil || l.Spec.RenewTime == nil {
		return "", false
	}
	age := time.Since(l.Spec.RenewTime.Time)
	if age <= le.LeaseDuration {
		return "", false
	}
	return fmt.Sprintf("its Lease %s/%s was last renewed %v ago (lease duration %v)",
		le.ResourceNamespace, le.ResourceName, age.Round(time.Second), le.LeaseDuration), true
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
