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

func holderOf(l *api.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return "<nil>"
	}
	return *l.Spec.HolderIdentity
}

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
	}{
		// The follower waits LeaseDuration (2 s) after it last saw the
		// lease change before taking it.
		{"lease-expires", false},
		// A released lease is taken at the follower's next retry.
		{"lease-released", true},
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
			// Every write to the Lease from here on, to see the release.
			w, err := leases.Watch(ctx, client.ListOptions{FieldSelector: "metadata.name=" + tc.name, ResourceVersion: l.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			leader.cancel()
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
			eventually(t, 8*time.Second, "the follower to take over", follower.leading.Load)

			// The writes since the stable phase: the leader's renewals,
			// with release its release (no holder), then the follower's
			// acquisition, and nothing after it.
			var writes []*api.Lease
			for len(writes) == 0 || holderOf(writes[len(writes)-1]) != follower.id {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok || ev.Type != api.Modified {
						t.Fatalf("lease watch: %v %+v, open %v", ev.Type, ev.Status, ok)
					}
					writes = append(writes, ev.Object)
				case <-time.After(5 * time.Second):
					t.Fatalf("no acquisition by %s among the lease writes", follower.id)
				}
			}
			acquired := writes[len(writes)-1]
			var before *api.Lease // the last write before the follower's
			if len(writes) > 1 {
				before = writes[len(writes)-2]
			} else {
				before = l
			}
			for _, wl := range writes[:len(writes)-1] {
				if h := holderOf(wl); h != leader.id && h != "" {
					t.Errorf("lease written with holder %q before the takeover", h)
				}
			}
			gap := acquired.Spec.AcquireTime.Sub(before.Spec.RenewTime.Time)
			t.Logf("takeover %v after the previous write (holder %q)", gap, holderOf(before))
			if tc.release {
				if holderOf(before) != "" {
					t.Errorf("the write before the takeover has holder %q, want the release (\"\")", holderOf(before))
				}
				// No waiting for expiry after a release.
				if gap >= 2*time.Second {
					t.Errorf("takeover %v after the release, want less than the lease duration", gap)
				}
			} else {
				if holderOf(before) != leader.id {
					t.Errorf("the write before the takeover has holder %q, want the old leader's renewal", holderOf(before))
				}
				// Not before the lease expired: the follower saw the last
				// renewal at most one request latency before it was written.
				if gap < 1500*time.Millisecond {
					t.Errorf("takeover %v after the last renewal, want about the lease duration (2s)", gap)
				}
			}
			l, err = leases.Get(ctx, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if l.ResourceVersion != acquired.ResourceVersion && holderOf(l) != follower.id {
				t.Errorf("lease after takeover = %+v", l.Spec)
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
