package clientintegration

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/leaderelection"
)

// leaders counts the candidates inside OnStartedLeading at once.
type leaders struct {
	mu       sync.Mutex
	current  int
	maxSeen  int
	holdings []string
}

func (l *leaders) enter(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current++
	l.maxSeen = max(l.maxSeen, l.current)
	l.holdings = append(l.holdings, id)
}

func (l *leaders) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current--
}

type candidate struct {
	id      string
	elector *leaderelection.Elector
	cancel  context.CancelFunc
	done    chan error
	leading atomic.Bool
	stopped atomic.Int32
	// leaderCtx is the context given to OnStartedLeading.
	leaderCtx atomic.Pointer[context.Context]
	// returned is closed when OnStartedLeading has returned.
	returned chan struct{}
}

func startCandidate(t *testing.T, c *client.Client, lease, id string, release bool, ls *leaders) *candidate {
	t.Helper()
	cd := &candidate{id: id, done: make(chan error, 1), returned: make(chan struct{})}
	e, err := leaderelection.New(leaderelection.Config{
		Client: c, Namespace: "kube-system", Name: lease, Identity: id,
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 300 * time.Millisecond,
		ReleaseOnCancel: release,
		Logger:          quietLogger(),
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				cd.leaderCtx.Store(&ctx)
				ls.enter(id)
				cd.leading.Store(true)
				<-ctx.Done()
				cd.leading.Store(false)
				ls.leave()
				close(cd.returned)
			},
			OnStoppedLeading: func() { cd.stopped.Add(1) },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cd.elector = e
	ctx, cancel := context.WithCancel(context.Background())
	cd.cancel = cancel
	go func() { cd.done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-cd.done:
		case <-time.After(5 * time.Second):
			t.Errorf("elector %s did not return", id)
		}
	})
	return cd
}

// TestLeaderElection runs two candidates on one Lease against the real
// server: one leads, the other follows; when the leader stops, the
// follower takes over after the lease expires (or at once when the leader
// released it), and the Lease records holder and transitions.
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	for _, tc := range []struct {
		name    string
		release bool
		// bounds on the takeover delay after the leader's cancel
		min, max time.Duration
	}{
		// The follower must wait LeaseDuration (2 s) after the last renewal
		// it saw, which came at most a RetryPeriod before the cancel.
		{"lease-expires", false, 1200 * time.Millisecond, 6 * time.Second},
		// A released lease is taken at the follower's next retry
		// (RetryPeriod jittered: at most 660 ms).
		{"lease-released", true, 0, 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			c := newClient(t, s)
			leases := client.Resource[api.Lease](c).Namespace("kube-system")
			ls := &leaders{}
			a := startCandidate(t, c, tc.name, "cand-a", tc.release, ls)
			b := startCandidate(t, c, tc.name, "cand-b", tc.release, ls)
			eventually(t, 5*time.Second, "a leader", func() bool { return a.leading.Load() || b.leading.Load() })
			leader, follower := a, b
			if b.leading.Load() {
				leader, follower = b, a
			}
			// Leadership is stable over several renewals, and the follower
			// knows who leads.
			first, err := leases.Get(ctx, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if !leader.leading.Load() || follower.leading.Load() || !leader.elector.IsLeader() || follower.elector.IsLeader() {
				t.Fatalf("leadership moved: %s leading %v, %s leading %v", leader.id, leader.leading.Load(), follower.id, follower.leading.Load())
			}
			if got := follower.elector.GetLeader(); got != leader.id {
				t.Errorf("follower sees leader %q, want %q", got, leader.id)
			}
			l, err := leases.Get(ctx, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if h := l.Spec.HolderIdentity; h == nil || *h != leader.id {
				t.Fatalf("holderIdentity = %v, want %s", h, leader.id)
			}
			if tr := l.Spec.LeaseTransitions; tr == nil || *tr != 0 {
				t.Errorf("leaseTransitions = %v, want 0", tr)
			}
			if d := l.Spec.LeaseDurationSeconds; d == nil || *d != 2 {
				t.Errorf("leaseDurationSeconds = %v, want 2", d)
			}
			if l.Spec.AcquireTime == nil || l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(first.Spec.RenewTime.Time) {
				t.Errorf("lease not renewed: acquire %v, renew %v then %v", l.Spec.AcquireTime, first.Spec.RenewTime, l.Spec.RenewTime)
			}
			firstAcquire := l.Spec.AcquireTime.Time

			leader.cancel()
			t0 := time.Now()
			select {
			case err := <-leader.done:
				leader.done <- err // for the cleanup
				if err != nil {
					t.Errorf("cancelled leader's Run = %v, want nil", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("cancelled leader did not return")
			}
			// Run has ended the leading work's context; with ReleaseOnCancel
			// it has also waited for the work to return (without, it need
			// not: as client-go, it does not wait).
			if lc := leader.leaderCtx.Load(); lc == nil || (*lc).Err() == nil {
				t.Error("Run returned with the leading context still live")
			}
			if tc.release {
				select {
				case <-leader.returned:
				default:
					t.Error("Run released the lease before OnStartedLeading returned")
				}
			}
			if n := leader.stopped.Load(); n != 1 {
				t.Errorf("OnStoppedLeading called %d times, want 1", n)
			}
			if tc.release {
				// Released: no holder, unless the follower was already quick.
				l, err := leases.Get(ctx, tc.name)
				if err != nil {
					t.Fatal(err)
				}
				if h := *l.Spec.HolderIdentity; h != "" && h != follower.id {
					t.Errorf("holder after release = %q", h)
				}
			}
			eventually(t, tc.max+time.Second, "the follower to take over", follower.leading.Load)
			took := time.Since(t0)
			t.Logf("takeover after %v", took)
			if took < tc.min || took > tc.max {
				t.Errorf("takeover after %v, want within [%v, %v]", took, tc.min, tc.max)
			}
			l, err = leases.Get(ctx, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if h := l.Spec.HolderIdentity; h == nil || *h != follower.id {
				t.Errorf("holderIdentity after takeover = %v, want %s", h, follower.id)
			}
			if tr := l.Spec.LeaseTransitions; tr == nil || *tr != 1 {
				t.Errorf("leaseTransitions after takeover = %v, want 1", tr)
			}
			if l.Spec.AcquireTime == nil || !l.Spec.AcquireTime.After(firstAcquire) {
				t.Errorf("acquireTime after takeover = %v, first %v", l.Spec.AcquireTime, firstAcquire)
			}
			ls.mu.Lock()
			defer ls.mu.Unlock()
			if ls.maxSeen != 1 || len(ls.holdings) != 2 {
				t.Errorf("leaders at once: max %d; leadership sequence %v", ls.maxSeen, ls.holdings)
			}
		})
	}
}
