package controller

import (
	"context"
	"log/slog"
	"time"

	"github.com/minik8s/minik8s/internal/informer"
)

// Every calls pass at once and then every period until ctx ends (kube's
// wait.UntilWithContext). The ticker starts before the first pass, so a
// slow pass does not push the later ones back. It is the timer of the
// controllers that look over a whole cache periodically rather than, or
// beside, draining a work queue: podgc's collection, nodelifecycle's node
// health monitor.
func Every(ctx context.Context, period time.Duration, pass func(context.Context)) {
	every(ctx, period, pass, true)
}

// EveryAfter is Every without the pass at once: for a resync whose first
// pass the informers' initial adds have already made.
func EveryAfter(ctx context.Context, period time.Duration, pass func(context.Context)) {
	every(ctx, period, pass, false)
}

func every(ctx context.Context, period time.Duration, pass func(context.Context), now bool) {
	t := time.NewTicker(period)
	defer t.Stop()
	if now {
		pass(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pass(ctx)
		}
	}
}

// PeriodicConfig is what a controller without a work queue declares:
// the pass it makes over its caches and how often.
type PeriodicConfig struct {
	Period time.Duration
	// Pass looks at the caches as they are and acts; what fails is
	// looked at again by the next pass, so it returns nothing.
	Pass func(ctx context.Context)
	// Log is the controller's logger (slog.Default() if nil).
	Log *slog.Logger
	// Started, when set, is logged once the caches have synced.
	Started string
}

// Periodic is the shared half of a controller that has no queue (kube's
// has none either): Run waits for the caches the controller reads, then
// makes a pass at once and every period until its context ends. The
// controller embeds it, as queue-driven ones embed Loop.
type Periodic struct {
	cfg     PeriodicConfig
	waitFor []informer.Syncer
}

var _ Interface = (*Periodic)(nil)

// NewPeriodic builds a controller's periodic pass; nothing runs until Run.
func NewPeriodic(cfg PeriodicConfig) *Periodic {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Periodic{cfg: cfg}
}

// WaitFor makes Run wait for caches the pass reads.
func (p *Periodic) WaitFor(caches ...informer.Syncer) {
	for _, c := range caches {
		if !containsSyncer(p.waitFor, c) {
			p.waitFor = append(p.waitFor, c)
		}
	}
}

// Run implements Interface; there is no queue, so workers is unused.
func (p *Periodic) Run(ctx context.Context, _ int) error {
	if !informer.WaitForCacheSync(ctx, p.waitFor...) {
		return nil
	}
	if p.cfg.Started != "" {
		p.cfg.Log.Info(p.cfg.Started, "period", p.cfg.Period)
	}
	Every(ctx, p.cfg.Period, p.cfg.Pass)
	return nil
}
