package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/scheduler/app"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func logger() *slog.Logger {
	if os.Getenv("MINIK8S_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func TestOptions(t *testing.T) {
	o := app.DefaultOptions()
	if o.Serving.SecurePort != 10259 || o.Serving.BindAddress != "0.0.0.0" || o.Client.QPS != 50 || o.Client.Burst != 100 || !o.LeaderElection.LeaderElect ||
		o.LeaderElection.ResourceNamespace != "kube-system" || o.LeaderElection.ResourceName != "kube-scheduler" ||
		o.LeaderElection.LeaseDuration != 15*time.Second || o.LeaderElection.RenewDeadline != 10*time.Second || o.LeaderElection.RetryPeriod != 2*time.Second ||
		o.PodInitialBackoff != time.Second || o.PodMaxBackoff != 10*time.Second {
		t.Errorf("defaults differ from kube-scheduler's: %+v", o)
	}
	cases := []struct {
		name    string
		mutate  func(*app.Options)
		wantErr string
	}{
		{"defaults", func(*app.Options) {}, ""},
		{"percentage too high", func(o *app.Options) { o.PercentageOfNodesToScore = 101 }, "percentage-of-nodes-to-score"},
		{"backoff inverted", func(o *app.Options) { o.PodMaxBackoff = 100 * time.Millisecond }, "pod-initial-backoff"},
		{"no workers", func(o *app.Options) { o.Parallelism = 0 }, "parallelism"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := app.DefaultOptions()
			tc.mutate(&o)
			err := o.Validate()
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

type instance struct {
	a      *app.App
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startApp runs a scheduler daemon against url with short leases.
func startApp(t *testing.T, url string, qps float64) *instance {
	t.Helper()
	o := app.DefaultOptions()
	o.Client.Master = url
	o.Client.QPS, o.Client.Burst = qps, int(qps)
	o.Serving.SecurePort = 0
	o.LeaderElection.LeaseDuration = 3 * time.Second
	o.LeaderElection.RenewDeadline = 2 * time.Second
	o.LeaderElection.RetryPeriod = 200 * time.Millisecond
	o.PodInitialBackoff, o.PodMaxBackoff = 100*time.Millisecond, time.Second
	a, err := app.New(o, logger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in := &instance{a: a, cancel: cancel, done: make(chan error, 1)}
	go func() { in.done <- a.Run(ctx) }()
	t.Cleanup(func() { in.stop(t) })
	return in
}

// stop cancels the daemon and waits for it (once; later calls return).
func (in *instance) stop(t *testing.T) {
	in.once.Do(func() {
		in.cancel()
		select {
		case err := <-in.done:
			if err != nil && !strings.Contains(err.Error(), "context canceled") {
				t.Logf("scheduler exited: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("scheduler did not stop within 60s")
		}
	})
}

func (in *instance) scheduled() int64 { return in.a.Scheduler.Stats.Scheduled.Load() }
func (in *instance) conflicts() int64 { return in.a.Scheduler.Stats.BindConflicts.Load() }

type cluster struct {
	t   *testing.T
	url string
	c   *client.Client
	ctx context.Context
}

func newCluster(t *testing.T, nodes int) *cluster {
	t.Setenv("KUBECONFIG", "")
	srv := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: srv.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	for i := range nodes {
		n := schedtest.Node(fmt.Sprintf("node-%d", i), "32", "64Gi", 500)
		n.UID = ""
		if _, err := client.Resource[api.Node](c).Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	return &cluster{t: t, url: srv.URL(), c: c, ctx: ctx}
}

func (cl *cluster) createPods(prefix string, n int) {
	cl.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := schedtest.Pod("default", fmt.Sprintf("%s-%d", prefix, i), "10m", "")
			p.UID = ""
			if _, err := client.Resource[api.Pod](cl.c).Namespace("default").Create(cl.ctx, p); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		cl.t.Fatal(err)
	}
}

func (cl *cluster) bound() (bound, total int) {
	l, err := client.Resource[api.Pod](cl.c).Namespace("default").List(cl.ctx, client.ListOptions{})
	if err != nil {
		cl.t.Fatal(err)
	}
	for _, p := range l.Items {
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	return bound, len(l.Items)
}

func (cl *cluster) waitBound(atLeast int) {
	cl.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := cl.bound(); b >= atLeast {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, n := cl.bound()
	cl.t.Fatalf("only %d of %d pods bound, want %d", b, n, atLeast)
}

func TestTwoSchedulersNeverDoubleBind(t *testing.T) {
	cl := newCluster(t, 3)
	a := startApp(t, cl.url, 200)
	b := startApp(t, cl.url, 200)
	cl.createPods("first", 60)
	cl.waitBound(60)
	// Give a late duplicate attempt time to show up.
	time.Sleep(500 * time.Millisecond)
	sa, sb := a.scheduled(), b.scheduled()
	if sa+sb != 60 || a.conflicts()+b.conflicts() != 0 {
		t.Fatalf("scheduled a=%d b=%d conflicts a=%d b=%d, want 60 bindings in all and no conflict", sa, sb, a.conflicts(), b.conflicts())
	}
	if sa != 0 && sb != 0 {
		t.Fatalf("both schedulers bound pods (a=%d, b=%d): only the leader may act", sa, sb)
	}
	leader, standby := a, b
	if sb > 0 {
		leader, standby = b, a
	}
	// The leader goes away (its lease is released); the standby takes over.
	leader.stop(t)
	cl.createPods("second", 40)
	cl.waitBound(100)
	time.Sleep(500 * time.Millisecond)
	if got := standby.scheduled(); got != 40 || standby.conflicts() != 0 {
		t.Fatalf("standby scheduled %d (conflicts %d), want 40 and none", got, standby.conflicts())
	}
	if total := leader.scheduled() + standby.scheduled(); total != 100 {
		t.Fatalf("%d bindings for 100 pods", total)
	}
}

func TestSchedulerStoppedMidBurstIsResumed(t *testing.T) {
	cl := newCluster(t, 4)
	// A slow first scheduler (20 requests/s) so the burst outlives it.
	first := startApp(t, cl.url, 20)
	cl.createPods("burst", 200)
	cl.waitBound(15)
	first.stop(t)
	// A request cut off client-side may still complete in the apiserver;
	// let those settle before counting.
	time.Sleep(time.Second)
	boundAtStop, _ := cl.bound()
	if boundAtStop >= 200 {
		t.Fatal("the first scheduler finished the burst before it was stopped")
	}
	// A binding cut off by the stop may have landed without the first
	// scheduler seeing the answer, never the other way round.
	if int64(boundAtStop) < first.scheduled() {
		t.Fatalf("%d pods bound but the first scheduler counted %d bindings", boundAtStop, first.scheduled())
	}
	t.Logf("first scheduler: %d bound, %d bindings abandoned at stop", first.scheduled(), first.a.Scheduler.Stats.Abandoned.Load())
	second := startApp(t, cl.url, 500)
	cl.waitBound(200)
	time.Sleep(500 * time.Millisecond)
	// The second scheduler binds exactly the pods left unbound: it never
	// tries a pod the first one bound.
	if second.scheduled() != int64(200-boundAtStop) || second.conflicts() != 0 || first.conflicts() != 0 {
		t.Fatalf("second scheduler bound %d, want %d (conflicts first %d, second %d)", second.scheduled(), 200-boundAtStop, first.conflicts(), second.conflicts())
	}
}

func TestMetricsAndHealth(t *testing.T) {
	cl := newCluster(t, 1)
	in := startApp(t, cl.url, 200)
	cl.createPods("m", 3)
	cl.waitBound(3)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		in.a.Server.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get("/readyz?verbose"); code != 200 || !strings.Contains(body, "[+]sched-handler-sync ok") {
		t.Errorf("/readyz = %d %q", code, body)
	}
	_, body := get("/metrics")
	for _, want := range []string{
		`scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 3`,
		`scheduler_pending_pods{queue="active"} 0`,
		`scheduler_pending_pods{queue="unschedulable"} 0`,
		`scheduler_e2e_scheduling_duration_seconds_count{profile="default-scheduler",result="scheduled"} 3`,
		`scheduler_scheduling_attempt_duration_seconds_bucket`,
		`scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
