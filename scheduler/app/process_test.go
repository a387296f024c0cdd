package app_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
)

// schedulerProcess is the real scheduler binary running against an
// apiserver, with its metrics on a loopback HTTPS port (open to anyone,
// as --authorization-always-allow-paths can make them).
type schedulerProcess struct {
	*daemontest.Process
	metrics string
}

// lease is its --leader-elect-lease-duration; the renew deadline is two
// thirds of it and the retry period a fifteenth, the shipped proportions
// (15 s, 10 s, 2 s) with a shorter retry.
func startProcess(t *testing.T, bin, url string, qps int, lease time.Duration) *schedulerProcess {
	t.Helper()
	l := daemontest.Listen(t)
	p := daemontest.StartInheriting(t, bin, []*net.TCPListener{l}, "--master", url, "--bind-address", "127.0.0.1", "--secure-port", daemontest.Port(l),
		"--authorization-always-allow-paths", "/healthz,/readyz,/livez,/metrics",
		"--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", "1", "--v", "2",
		"--leader-elect-lease-duration", lease.String(), "--leader-elect-renew-deadline", (lease * 2 / 3).String(), "--leader-elect-retry-period", (lease / 15).String(),
		"--pod-initial-backoff", "100ms", "--pod-max-backoff", "1s")
	return &schedulerProcess{Process: p, metrics: fmt.Sprintf("https://%s/metrics", l.Addr())}
}

// counter reads one sample of the process's /metrics (0 when absent).
func (p *schedulerProcess) counter(t *testing.T, sample string) float64 {
	t.Helper()
	m, err := daemontest.Scrape(p.metrics)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return m[sample]
}

// A scheduler process killed with SIGKILL in the middle of a burst keeps
// its lease until it expires; the next process then takes over and binds
// exactly the pods left, every one once.
func TestSchedulerProcessKilledMidBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the scheduler binary")
	}
	bin := daemontest.Build(t, "github.com/minik8s/minik8s/scheduler")
	cl := newCluster(t, 4)
	first := startProcess(t, bin, cl.url, 20, 3*time.Second) // slow, so the burst outlives it
	cl.createPods("burst", 200)
	cl.waitBound(15)
	first.Kill9(t)
	// A binding sent before the kill may still land; let those settle.
	time.Sleep(time.Second)
	boundAtKill, _ := cl.bound()
	if boundAtKill >= 200 {
		t.Fatal("the first scheduler finished the burst before it was killed")
	}
	second := startProcess(t, bin, cl.url, 500, 3*time.Second)
	cl.waitBound(200)
	time.Sleep(500 * time.Millisecond)
	scheduled := second.counter(t, `scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}`)
	errors := second.counter(t, `scheduler_schedule_attempts_total{profile="default-scheduler",result="error"}`)
	if int(scheduled) != 200-boundAtKill || errors != 0 {
		t.Fatalf("second scheduler: %v bindings, %v errors; want %d bindings (the pods left) and none refused", scheduled, errors, 200-boundAtKill)
	}
	t.Logf("first scheduler bound %d before SIGKILL; the second bound the other %d", boundAtKill, int(scheduled))
}

// A scheduler throttled to one request a second, binding a burst, keeps
// renewing its lease (the lease has a client of its own); once another
// holder takes the lease, the process stops and exits non-zero, as
// kube-scheduler does, for its supervisor to restart it as a standby.
func TestSchedulerProcessLeaseRenewedUnderLoadExitsWhenLost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the scheduler binary")
	}
	bin := daemontest.Build(t, "github.com/minik8s/minik8s/scheduler")
	cl := newCluster(t, 4)
	// The lease client has its own limiter but the same --kube-api-qps,
	// so it too renews at one request a second; each request is bounded
	// by half the renew deadline (as client-go's), which a loaded machine
	// must be able to meet: a 6 s lease (4 s deadline, 2 s per request).
	const lease = 6 * time.Second
	p := startProcess(t, bin, cl.url, 1, lease)
	cl.createPods("load", 100)
	leases := client.Resource[api.Lease](cl.c).Namespace("kube-system")
	var holder string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if l, err := leases.Get(cl.ctx, "kube-scheduler"); err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			holder = *l.Spec.HolderIdentity
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if holder == "" {
		t.Fatal("the scheduler never took the lease")
	}
	// Three lease durations under a burst it binds at one request a second.
	time.Sleep(3 * lease)
	select {
	case <-p.Done():
		t.Fatalf("the scheduler exited under load: %s", p.ExitStatus())
	default:
	}
	l, err := leases.Get(cl.ctx, "kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != holder || l.Spec.RenewTime == nil || time.Since(l.Spec.RenewTime.Time) > lease {
		t.Fatalf("lease under load: holder %v renewed %v; want %s renewed within the lease duration", l.Spec.HolderIdentity, l.Spec.RenewTime, holder)
	}
	if b, _ := cl.bound(); b >= 100 {
		t.Fatal("the burst was bound already: the test needs it still going")
	}

	// The holder renews meanwhile: take the lease from the copy read
	// last, again on a conflict.
	thief, long := "thief", int32(60)
	for tries := 0; ; tries++ {
		now := api.NowMicro()
		l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime, l.Spec.LeaseDurationSeconds = &thief, &now, &now, &long
		_, err := leases.Update(cl.ctx, l)
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || tries == 20 {
			t.Fatal(err)
		}
		if l, err = leases.Get(cl.ctx, "kube-scheduler"); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-p.Done():
		if !strings.Contains(p.ExitStatus(), "exit status 1") {
			t.Fatalf("exit after the lost lease: %s, want exit status 1", p.ExitStatus())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the scheduler still runs 15 s after losing its lease")
	}
}
