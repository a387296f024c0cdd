package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// Defaults used for zero durations, as kube-scheduler and
// kube-controller-manager use.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	// JitterFactor spreads the retries of candidates.
	JitterFactor = 1.2
)

// ErrLeaderElectionLost is returned by Run when the lease could not be
// renewed within RenewDeadline.
var ErrLeaderElectionLost = errors.New("leaderelection lost")

// Callbacks are called as leadership changes.
type Callbacks struct {
	// OnStartedLeading runs in its own goroutine when the lease is
	// acquired; ctx is cancelled when leadership ends, and the work must
	// stop then. After a lost lease Run returns without waiting for it.
	// Required.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called once after leading ends, whether the lease
	// was lost or Run's context ended. It is not called if this candidate
	// never led. Required.
	OnStoppedLeading func()
	// OnNewLeader is called when the observed holder changes (including to
	// this candidate). It runs on the election loop and must return quickly.
	OnNewLeader func(identity string)
}

// Config configures an election.
type Config struct {
	Client *client.Client
	// Namespace and Name of the Lease ("kube-system", "kube-scheduler").
	Namespace, Name string
	// Identity of this candidate, unique among candidates (host name plus a
	// random suffix, typically).
	Identity string
	// LeaseDuration is how long non-leaders wait after the last observed
	// change before taking over; RenewDeadline how long the leader retries
	// renewing before giving up; RetryPeriod the interval between tries.
	// LeaseDuration > RenewDeadline > JitterFactor*RetryPeriod.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Callbacks                                 Callbacks
	// ReleaseOnCancel clears the holder when Run's context ends, so a
	// successor need not wait LeaseDuration. Only set it if the work done
	// under OnStartedLeading has stopped when its context is cancelled:
	// Run waits for OnStartedLeading to return before releasing.
	ReleaseOnCancel bool
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Elector runs one candidate's election.
type Elector struct {
	cfg    Config
	leases *client.ResourceClient[api.Lease, *api.Lease]
	log    *slog.Logger

	mu sync.Mutex
	// observed is the last Lease read or written, observedTime when this
	// candidate saw its resourceVersion change, by the local clock.
	observed       *api.Lease
	observedTime   time.Time
	reportedLeader string

	leading atomic.Bool
	running atomic.Bool
}

// New validates cfg, applies defaults and returns an Elector.
func New(cfg Config) (*Elector, error) {
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.RenewDeadline == 0 {
		cfg.RenewDeadline = DefaultRenewDeadline
	}
	if cfg.RetryPeriod == 0 {
		cfg.RetryPeriod = DefaultRetryPeriod
	}
	switch {
	case cfg.LeaseDuration <= cfg.RenewDeadline:
		return nil, errors.New("leaseDuration must be greater than renewDeadline")
	case cfg.RenewDeadline <= time.Duration(JitterFactor*float64(cfg.RetryPeriod)):
		return nil, errors.New("renewDeadline must be greater than retryPeriod*JitterFactor")
	case cfg.LeaseDuration < time.Second:
		return nil, errors.New("leaseDuration must be at least one second (the Lease stores whole seconds)")
	case cfg.RetryPeriod < 0 || cfg.RenewDeadline < 0:
		return nil, errors.New("retryPeriod and renewDeadline must be greater than zero")
	case cfg.Callbacks.OnStartedLeading == nil:
		return nil, errors.New("OnStartedLeading callback must not be nil")
	case cfg.Callbacks.OnStoppedLeading == nil:
		return nil, errors.New("OnStoppedLeading callback must not be nil")
	case cfg.Identity == "":
		return nil, errors.New("lock identity is empty")
	case cfg.Name == "" || cfg.Namespace == "":
		return nil, errors.New("lease namespace and name must be set")
	case cfg.Client == nil:
		return nil, errors.New("client must be set")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Elector{
		cfg:    cfg,
		leases: client.Resource[api.Lease](cfg.Client).Namespace(cfg.Namespace),
		log:    log.With("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity),
	}, nil
}

// Run is New followed by Elector.Run.
func Run(ctx context.Context, cfg Config) error {
	e, err := New(cfg)
	if err != nil {
		return err
	}
	return e.Run(ctx)
}

// Run campaigns until the lease is acquired, then leads until ctx ends
// (returning nil) or renewal fails for RenewDeadline (returning
// ErrLeaderElectionLost). An Elector runs once.
func (e *Elector) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("leader elector already ran")
	}
	if !e.acquire(ctx) {
		return nil
	}
	e.leading.Store(true)
	e.log.Info("successfully acquired lease")
	leaderCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan struct{})
	go func() {
		defer close(started)
		e.cfg.Callbacks.OnStartedLeading(leaderCtx)
	}()

	lost := e.renew(leaderCtx)
	cancel()
	e.leading.Store(false)
	if lost {
		e.log.Info("failed to renew lease: stopped leading")
		e.cfg.Callbacks.OnStoppedLeading()
		return ErrLeaderElectionLost
	}
	if e.cfg.ReleaseOnCancel {
		<-started // the guarded work must be over before a successor starts
		e.release()
	}
	e.cfg.Callbacks.OnStoppedLeading()
	return nil
}

// IsLeader reports whether this candidate currently leads.
func (e *Elector) IsLeader() bool { return e.leading.Load() }

// GetLeader returns the last observed holder identity.
func (e *Elector) GetLeader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return holderOf(e.observed)
}

// Check is a health check for /healthz: it fails when this candidate leads
// but has not renewed the lease for LeaseDuration plus maxTolerableExpiredLease,
// meaning it is stuck and should be restarted.
func (e *Elector) Check(maxTolerableExpiredLease time.Duration) error {
	if !e.IsLeader() {
		return nil
	}
	e.mu.Lock()
	last := e.observedTime
	e.mu.Unlock()
	if time.Since(last) > e.cfg.LeaseDuration+maxTolerableExpiredLease {
		return fmt.Errorf("failed election to renew leadership on lease %s", e.cfg.Name)
	}
	return nil
}

func holderOf(l *api.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func jittered(d time.Duration) time.Duration {
	return d + time.Duration(rand.Float64()*JitterFactor*float64(d))
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// acquire tries every jittered RetryPeriod until it holds the lease; false
// when ctx ended first.
func (e *Elector) acquire(ctx context.Context) bool {
	e.log.Info("attempting to acquire leader lease")
	for {
		ok := e.tryAcquireOrRenew(ctx)
		e.reportLeader()
		if ok {
			return true
		}
		if !sleep(ctx, jittered(e.cfg.RetryPeriod)) {
			return false
		}
	}
}

// renew renews every RetryPeriod; it returns true when a renewal did not
// succeed within RenewDeadline (lost), false when ctx ended.
func (e *Elector) renew(ctx context.Context) (lost bool) {
	for {
		deadline, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
		ok := false
		for {
			if ok = e.tryAcquireOrRenew(deadline); ok {
				break
			}
			if !sleep(deadline, e.cfg.RetryPeriod) {
				break
			}
		}
		cancel()
		e.reportLeader()
		if ctx.Err() != nil {
			return false
		}
		if !ok {
			return true
		}
		if !sleep(ctx, e.cfg.RetryPeriod) {
			return false
		}
	}
}

// observe records l as the last seen lease; the observation time moves only
// when its resourceVersion changed.
func (e *Elector) observe(l *api.Lease, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.observed == nil || e.observed.ResourceVersion != l.ResourceVersion {
		e.observedTime = now
	}
	e.observed = l
}

// leaseValid reports whether the observed lease is unexpired by the local
// clock: LeaseDuration (the lease's own, else ours) after we saw it change.
func (e *Elector) leaseValidLocked(now time.Time) bool {
	d := e.cfg.LeaseDuration
	if e.observed != nil && e.observed.Spec.LeaseDurationSeconds != nil && *e.observed.Spec.LeaseDurationSeconds > 0 {
		d = time.Duration(*e.observed.Spec.LeaseDurationSeconds) * time.Second
	}
	return e.observedTime.Add(d).After(now)
}

func ptr[T any](v T) *T { return &v }

// requestTimeout bounds each request to the Lease, as client-go's
// resourcelock.NewFromKubeconfig bounds its client's: half the
// RenewDeadline, at least one second. A server that hangs a request then
// costs one try, not the election: the next try goes out a RetryPeriod
// later, and a leader still retries until RenewDeadline.
func (e *Elector) requestTimeout() time.Duration {
	return max(e.cfg.RenewDeadline/2, time.Second)
}

// request is the context of one request to the Lease.
func (e *Elector) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.requestTimeout())
}

func (e *Elector) updateLease(ctx context.Context, l *api.Lease) (*api.Lease, error) {
	ctx, cancel := e.request(ctx)
	defer cancel()
	return e.leases.Update(ctx, l)
}

func (e *Elector) getLease(ctx context.Context) (*api.Lease, error) {
	ctx, cancel := e.request(ctx)
	defer cancel()
	return e.leases.Get(ctx, e.cfg.Name)
}

// tryAcquireOrRenew makes one attempt to take or renew the lease.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) bool {
	now := time.Now()
	id := e.cfg.Identity
	durSecs := int32(e.cfg.LeaseDuration / time.Second)
	nowMicro := api.MicroTime{Time: now.UTC().Truncate(time.Microsecond)}

	// Fast path: still the valid holder, renew from our last copy without
	// reading first.
	e.mu.Lock()
	var mine *api.Lease
	if holderOf(e.observed) == id && e.leaseValidLocked(now) {
		cp := *e.observed
		mine = &cp
	}
	e.mu.Unlock()
	if mine != nil {
		mine.Spec.RenewTime = &nowMicro
		mine.Spec.LeaseDurationSeconds = &durSecs
		updated, err := e.updateLease(ctx, mine)
		if err == nil {
			e.observe(updated, now)
			return true
		}
		e.log.Debug("renewing lease from cache failed, reading it again", "err", err)
	}

	cur, err := e.getLease(ctx)
	if apierrors.IsNotFound(err) {
		cctx, cancel := e.request(ctx)
		defer cancel()
		created, err := e.leases.Create(cctx, &api.Lease{
			ObjectMeta: api.ObjectMeta{Name: e.cfg.Name, Namespace: e.cfg.Namespace},
			Spec: api.LeaseSpec{
				HolderIdentity:       ptr(id),
				LeaseDurationSeconds: &durSecs,
				AcquireTime:          &nowMicro,
				RenewTime:            &nowMicro,
				LeaseTransitions:     ptr(int32(0)),
			},
		})
		if err != nil {
			e.log.Debug("creating lease failed", "err", err)
			return false
		}
		e.observe(created, now)
		return true
	}
	if err != nil {
		e.log.Info("error retrieving lease", "err", err)
		return false
	}
	e.observe(cur, now)

	holder := holderOf(cur)
	e.mu.Lock()
	valid := e.leaseValidLocked(now)
	e.mu.Unlock()
	if holder != "" && holder != id && valid {
		return false // held by another candidate and not expired
	}

	next := *cur
	next.Spec = cur.Spec
	transitions := int32(0)
	if cur.Spec.LeaseTransitions != nil {
		transitions = *cur.Spec.LeaseTransitions
	}
	if holder != id {
		transitions++
		next.Spec.AcquireTime = &nowMicro
	} else if next.Spec.AcquireTime == nil {
		next.Spec.AcquireTime = &nowMicro
	}
	next.Spec.LeaseTransitions = &transitions
	next.Spec.HolderIdentity = ptr(id)
	next.Spec.RenewTime = &nowMicro
	next.Spec.LeaseDurationSeconds = &durSecs
	// cur.ResourceVersion travels with next: a concurrent writer makes this
	// a 409, and the other candidate has won.
	updated, err := e.updateLease(ctx, &next)
	if err != nil {
		if apierrors.IsConflict(err) {
			e.log.Debug("lease changed while acquiring it", "err", err)
		} else {
			e.log.Info("failed to update lease", "err", err)
		}
		return false
	}
	e.observe(updated, now)
	return true
}

// release gives the lease up so a successor need not wait for it to expire.
func (e *Elector) release() {
	e.mu.Lock()
	var l *api.Lease
	if holderOf(e.observed) == e.cfg.Identity {
		cp := *e.observed
		l = &cp
	}
	e.mu.Unlock()
	if l == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline)
	defer cancel()
	now := api.MicroTime{Time: time.Now().UTC().Truncate(time.Microsecond)}
	l.Spec.HolderIdentity = ptr("")
	l.Spec.LeaseDurationSeconds = ptr(int32(1))
	l.Spec.RenewTime = &now
	l.Spec.AcquireTime = &now
	updated, err := e.updateLease(ctx, l)
	if apierrors.IsConflict(err) {
		// A renewal cancelled by the stop may still have reached the
		// server after we last observed the lease, so our copy is one
		// version behind: read it again and release it if it is still ours.
		updated, err = e.releaseCurrent(ctx, now)
	}
	if err != nil {
		e.log.Info("failed to release lease", "err", err)
		return
	}
	if updated == nil {
		return // someone else holds it now: nothing of ours to release
	}
	e.observe(updated, time.Now())
	e.log.Info("released lease")
}

// releaseCurrent releases the lease as stored now, if this candidate still
// holds it (nil, nil when another does).
func (e *Elector) releaseCurrent(ctx context.Context, now api.MicroTime) (*api.Lease, error) {
	cur, err := e.getLease(ctx)
	if err != nil {
		return nil, err
	}
	if holderOf(cur) != e.cfg.Identity {
		return nil, nil
	}
	cur.Spec.HolderIdentity = ptr("")
	cur.Spec.LeaseDurationSeconds = ptr(int32(1))
	cur.Spec.RenewTime = &now
	cur.Spec.AcquireTime = &now
	return e.updateLease(ctx, cur)
}

// reportLeader calls OnNewLeader when the observed holder changed.
func (e *Elector) reportLeader() {
	e.mu.Lock()
	holder := holderOf(e.observed)
	changed := holder != e.reportedLeader
	e.reportedLeader = holder
	e.mu.Unlock()
	if changed && holder != "" && e.cfg.Callbacks.OnNewLeader != nil {
		e.cfg.Callbacks.OnNewLeader(holder)
	}
}
