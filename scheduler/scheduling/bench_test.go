package scheduling_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/kubeconfig"
	"github.com/minik8s/minik8s/scheduler/app"
	"github.com/minik8s/minik8s/scheduler/schedtest"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

// parallel calls fn(i) for i in [0, n) from workers goroutines.
func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}

// tunedSchedulerFlags raise the scheduler's client rate limit above the
// shipped defaults for the "tuned" row: kube's scheduler_perf setting, high
// enough that the limit does not set the pace, so the row measures the
// scheduler and the apiserver's binding path.
var tunedSchedulerFlags = []string{"--kube-api-qps=5000", "--kube-api-burst=5000"}

// schedulerRow is one configuration of the scheduler daemon under test.
type schedulerRow struct {
	name string
	opts app.Options
}

// schedulerRows are the shipped scheduler (no flags: the QPS and burst are
// the daemon's own flag defaults) and the tuned one, each named by the
// client rate limit it runs with.
func schedulerRows(b *testing.B) []schedulerRow {
	var rows []schedulerRow
	for _, r := range []struct {
		label string
		flags []string
	}{{"defaults", nil}, {"tuned", tunedSchedulerFlags}} {
		o := app.DefaultOptions()
		var fss daemon.FlagSets
		o.AddFlags(&fss)
		if err := fss.Parse(r.flags); err != nil {
			b.Fatalf("%s flags %v: %v", r.label, r.flags, err)
		}
		rows = append(rows, schedulerRow{name: fmt.Sprintf("%s_qps=%g_burst=%d", r.label, o.Client.QPS, o.Client.Burst), opts: o})
	}
	return rows
}

// BenchmarkSchedulingThroughput is kube's scheduler_perf SchedulingBasic
// shape on one machine: a real apiserver with embedded etcd in-process,
// SCHED_BENCH_NODES simulated nodes (default 5,000: 4 cpu, 32 GiB, 110
// pods) and SCHED_BENCH_PODS pods (default 10,000; 100m cpu, 64 MiB).
//
// The scheduler is the daemon as it ships (app.New): over HTTPS as
// system:kube-scheduler with the client certificate the apiserver issued,
// authorized by RBAC, leader election on. It runs in two rows with the same
// workload: "defaults", the daemon's own --kube-api-qps and
// --kube-api-burst defaults, and "tuned", with tunedSchedulerFlags; each row
// name carries its QPS and burst. Each row has a fresh apiserver.
//
// Phase "live": the pods are created through the API (HTTPS, as the admin)
// by 64 client goroutines while the scheduler runs, as in scheduler_perf;
// it reports the steady-state pods scheduled per second (bindings the
// apiserver acknowledged, between 10% and 90% of the pods bound) and the
// p50/p99 latency from a pod's create request to its binding seen on a
// watch. Phase "backlog": the scheduler
// is stopped, another SCHED_BENCH_PODS pods are created, and a fresh
// scheduler drains them; its rate is the scheduler's capacity (scheduling
// plus the apiserver's binding path) without the creates competing for
// the CPU.
func BenchmarkSchedulingThroughput(b *testing.B) {
	for _, row := range schedulerRows(b) {
		b.Run(row.name, func(b *testing.B) { benchSchedulingThroughput(b, row.opts) })
	}
}

func benchSchedulingThroughput(b *testing.B, opts app.Options) {
	numNodes := schedtest.EnvInt("SCHED_BENCH_NODES", 5000)
	numPods := schedtest.EnvInt("SCHED_BENCH_PODS", 10000)
	srv := apiservertest.Start(b, apiservertest.WithTLS)
	opts.Client.Kubeconfig = srv.PKI().Path("scheduler.kubeconfig")
	opts.Serving.SecurePort = 0 // no /metrics listener: nothing binds beyond the apiserver's loopback ports
	load := unthrottledAdmin(b, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()

	t0 := time.Now()
	nodes := client.Resource[api.Node](load)
	if err := parallel(numNodes, 64, func(i int) error {
		n := schedtest.Node(fmt.Sprintf("node-%05d", i), "4", "32Gi", 110)
		n.UID = ""
		_, err := nodes.Create(ctx, n)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.Logf("created %d nodes in %v", numNodes, time.Since(t0).Round(time.Millisecond))
	b.ResetTimer()

	sched := startBenchScheduler(ctx, b, opts, numNodes)
	w := newBindWatch(ctx, b, load, "live-", numPods)
	start := time.Now()
	cpu0 := schedtest.CPUTime()
	createPods(ctx, b, load, "live-", numPods, w.created)
	b.Logf("live: created %d pods in %v", numPods, time.Since(start).Round(time.Millisecond))
	w.wait(ctx, b, sched)
	live := w.report(b, "live", start, sched)
	liveCPU := schedtest.CPUTime() - cpu0
	sched.stop(b)
	b.ReportMetric(live.steady, "pods/s")
	b.ReportMetric(float64(live.p50.Milliseconds()), "p50_ms")
	b.ReportMetric(float64(live.p99.Milliseconds()), "p99_ms")

	w = newBindWatch(ctx, b, load, "backlog-", numPods)
	createPods(ctx, b, load, "backlog-", numPods, w.created)
	start = time.Now()
	cpu0 = schedtest.CPUTime()
	sched = startBenchScheduler(ctx, b, opts, numNodes)
	b.Logf("backlog: fresh scheduler synced in %v", time.Since(start).Round(time.Millisecond))
	w.wait(ctx, b, sched)
	backlog := w.report(b, "backlog", start, sched)
	backlogCPU := schedtest.CPUTime() - cpu0
	sched.stop(b)
	b.ReportMetric(backlog.steady, "backlog_pods/s")
	// CPU per pod of the whole process (apiserver, etcd, scheduler, load
	// generator and watch): with the machine to itself, cores / this is
	// the rate it can sustain.
	b.ReportMetric(float64(liveCPU.Microseconds())/float64(numPods), "live_cpu_us/pod")
	b.ReportMetric(float64(backlogCPU.Microseconds())/float64(numPods), "backlog_cpu_us/pod")
}

// unthrottledAdmin is the load generator's client: the admin kubeconfig the
// apiserver wrote (HTTPS, client certificate), without a rate limit.
func unthrottledAdmin(b *testing.B, srv *apiservertest.Server) *client.Client {
	kc, err := kubeconfig.Load(srv.Options.WriteKubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := kc.ClientConfig("")
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS = -1
	c, err := client.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// benchScheduler is a running scheduler daemon; exited is closed when its
// Run returned (err says why), which in a benchmark is only after stop.
type benchScheduler struct {
	opts   app.Options
	s      *scheduling.Scheduler
	exited chan struct{}
	err    error
	stop   func(testing.TB)

	mu      sync.Mutex
	samples []bindSample
}

// leaseLost says whether the scheduler's leader-election Lease went
// unrenewed for longer than its duration: the daemon no longer leads and
// schedules nothing (whether or not its process exited).
func (bs *benchScheduler) leaseLost(ctx context.Context, c *client.Client) (string, bool) {
	le := bs.opts.LeaderElection
	if !le.LeaderElect {
		return "", false
	}
	l, err := client.Resource[api.Lease](c).Namespace(le.ResourceNamespace).Get(ctx, le.ResourceName)
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

// startBenchScheduler runs the scheduler daemon with opts and waits until
// its cache holds every node.
func startBenchScheduler(ctx context.Context, b *testing.B, opts app.Options, numNodes int) *benchScheduler {
	a, err := app.New(opts, testLogger())
	if err != nil {
		b.Fatal(err)
	}
	bs := &benchScheduler{opts: opts, s: a.Scheduler, exited: make(chan struct{})}
	sctx, cancel := context.WithCancel(ctx)
	go func() { defer close(bs.exited); bs.err = a.Run(sctx) }()
	go bs.sample()
	for !bs.s.HasSynced() || bs.s.Cache.NodeCount() < numNodes {
		select {
		case <-bs.exited:
			b.Fatalf("scheduler exited before its cache saw all nodes: %v", bs.err)
		case <-ctx.Done():
			b.Fatal("scheduler cache never saw all nodes")
		case <-time.After(20 * time.Millisecond):
		}
	}
	bs.stop = func(tb testing.TB) {
		cancel()
		<-bs.exited
		st := &bs.s.Stats
		tb.Logf("scheduler stopped: scheduled=%d conflicts=%d errors=%d unschedulable=%d",
			st.Scheduled.Load(), st.BindConflicts.Load(), st.Errors.Load(), st.Unschedulable.Load())
	}
	return bs
}

func createPods(ctx context.Context, b *testing.B, c *client.Client, prefix string, n int, created []time.Time) {
	pods := client.Resource[api.Pod](c).Namespace("default")
	if err := parallel(n, 64, func(i int) error {
		p := schedtest.Pod("default", fmt.Sprintf("%s%05d", prefix, i), "100m", "64Mi")
		p.UID = ""
		created[i] = time.Now()
		_, err := pods.Create(ctx, p)
		return err
	}); err != nil {
		b.Fatal(err)
	}
}

// bindWatch records when each pod named prefix+i is first seen bound, via
// an informer (which re-watches if the apiserver ends a watch).
type bindWatch struct {
	prefix   string
	created  []time.Time
	boundAt  []time.Time
	count    atomic.Int64
	allBound chan struct{}
	c        *client.Client
}

func newBindWatch(ctx context.Context, b *testing.B, c *client.Client, prefix string, n int) *bindWatch {
	w := &bindWatch{prefix: prefix, created: make([]time.Time, n), boundAt: make([]time.Time, n), allBound: make(chan struct{}), c: c}
	var mu sync.Mutex
	seen := func(p *api.Pod) {
		if p.Spec.NodeName == "" || !strings.HasPrefix(p.Name, prefix) {
			return
		}
		i, err := strconv.Atoi(p.Name[len(prefix):])
		if err != nil || i >= n {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !w.boundAt[i].IsZero() {
			return
		}
		w.boundAt[i] = time.Now()
		if w.count.Add(1) == int64(n) {
			close(w.allBound)
		}
	}
	f := informer.NewFactory(c, informer.FactoryOptions{Logger: testLogger()})
	inf := informer.Shared[api.Pod](f, "default", client.ListOptions{})
	inf.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, _ bool) { seen(p) },
		OnUpdate: func(_, p *api.Pod) { seen(p) },
	})
	wctx, stop := context.WithCancel(ctx)
	f.Start(wctx)
	if !f.WaitForCacheSync(ctx) {
		b.Fatal("bench informer did not sync")
	}
	go func() { <-w.allBound; stop() }()
	b.Cleanup(stop)
	return w
}

// wait waits until every pod is bound; it fails when the scheduler exits
// or stopped leading (a daemon that lost its lease schedules nothing), or
// when no pod got bound for two minutes, saying how many pods the apiserver
// holds unbound.
func (w *bindWatch) wait(ctx context.Context, b *testing.B, sched *benchScheduler) {
	last, lastChange := w.count.Load(), time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-w.allBound:
			return
		case <-ctx.Done():
			b.Fatalf("only %d of %d %s pods bound before the deadline", w.count.Load(), len(w.created), w.prefix)
		case <-sched.exited:
			b.Fatalf("the scheduler exited with %d of %d %s pods bound: %v", w.count.Load(), len(w.created), w.prefix, sched.err)
		case <-t.C:
		}
		if c := w.count.Load(); c != last {
			last, lastChange = c, time.Now()
			continue
		}
		if time.Since(lastChange) > 10*time.Second {
			if why, lost := sched.leaseLost(ctx, w.c); lost {
				b.Fatalf("the scheduler stopped leading with %d of %d %s pods bound: %s", last, len(w.created), w.prefix, why)
			}
		}
		if time.Since(lastChange) > 2*time.Minute {
			l, err := client.Resource[api.Pod](w.c).Namespace("default").List(ctx, client.ListOptions{})
			unbound := -1
			if err == nil {
				unbound = 0
				for _, p := range l.Items {
					if p.Spec.NodeName == "" {
						unbound++
					}
				}
			}
			b.Fatalf("no progress for 2 minutes: %d of %d %s pods seen bound; the apiserver has %d unbound pods", last, len(w.created), w.prefix, unbound)
		}
	}
}

type phaseResult struct {
	steady   float64
	p50, p99 time.Duration
}

// report computes a phase's figures. The steady rate counts the bindings
// the apiserver acknowledged to the scheduler (its Stats, sampled), between
// 10% and 90% of the pods: a watch the apiserver ends as too slow, then
// resumed or re-listed, would deliver bindings in a burst and make a rate
// from the watch meaningless. The latencies are from a pod's create request
// to its binding seen on the watch, as a client sees it.
func (w *bindWatch) report(b *testing.B, phase string, start time.Time, sched *benchScheduler) phaseResult {
	n := len(w.boundAt)
	sorted := append([]time.Time(nil), w.boundAt...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	lo, hi := sorted[n/10], sorted[n*9/10]
	watched := float64(n*9/10-n/10) / hi.Sub(lo).Seconds()
	r := phaseResult{steady: sched.steadyRate(int64(n))}
	lat := make([]time.Duration, n)
	for i := range lat {
		lat[i] = w.boundAt[i].Sub(w.created[i])
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.p50, r.p99 = lat[n/2], lat[n*99/100]
	b.Logf("%s: %d pods bound in %v; steady %.0f pods/s (%.0f as seen on the watch); create-to-bind latency p50 %v p99 %v",
		phase, n, sorted[n-1].Sub(start).Round(time.Millisecond), r.steady, watched, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond))
	return r
}

// sample records the scheduler's count of acknowledged bindings every
// 10 ms until it exits.
func (bs *benchScheduler) sample() {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-bs.exited:
			return
		case now := <-t.C:
			bs.mu.Lock()
			bs.samples = append(bs.samples, bindSample{now, bs.s.Stats.Scheduled.Load()})
			bs.mu.Unlock()
		}
	}
}

type bindSample struct {
	at    time.Time
	bound int64
}

// steadyRate is the scheduler's binding rate between the samples where 10%
// and 90% of n pods were bound.
func (bs *benchScheduler) steadyRate(n int64) float64 {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	var lo, hi *bindSample
	for i := range bs.samples {
		sm := &bs.samples[i]
		if lo == nil && sm.bound >= n/10 {
			lo = sm
		}
		if sm.bound >= n*9/10 {
			hi = sm
			break
		}
	}
	if lo == nil || hi == nil || !hi.at.After(lo.at) {
		return 0
	}
	return float64(hi.bound-lo.bound) / hi.at.Sub(lo.at).Seconds()
}
