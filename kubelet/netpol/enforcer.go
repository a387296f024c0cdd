package netpol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/kubelet/proxy"
	"github.com/minik8s/minik8s/kubelet/syncloop"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures an Enforcer.
type Config struct {
	Client *client.Client
	// Factory, if set, is shared with the rest of the node agent;
	// otherwise the enforcer makes its own.
	Factory *informer.Factory
	// NodeName is the node whose pods are protected.
	NodeName string
	// MinSyncPeriod bounds how often the rules are rewritten while changes
	// keep coming (pods churn); SyncPeriod is the periodic rewrite that
	// repairs rules someone else flushed.
	MinSyncPeriod, SyncPeriod time.Duration
	// Runner loads the rules; the service proxy's iptables runner by default.
	Runner proxy.Runner
	Logger *slog.Logger
	// Metrics, if set, receives the sync metrics.
	Metrics prometheus.Registerer
}

// DefaultMinSyncPeriod is the shortest interval between rewrites when
// Config.MinSyncPeriod is unset (the proxy's default too).
const DefaultMinSyncPeriod = proxy.DefaultMinSyncPeriod

// Enforcer keeps the node's policy chains equal to what the API's Pods,
// Namespaces and NetworkPolicies ask for.
type Enforcer struct {
	cfg        Config
	pods       *informer.Informer[api.Pod]
	namespaces *informer.Informer[api.Namespace]
	policies   *informer.Informer[api.NetworkPolicy]
	loop       *syncloop.Loop

	syncDur  prometheus.Histogram
	syncs    prometheus.Counter
	lastSync prometheus.Gauge
	isolated *prometheus.GaugeVec

	// syncMu serializes Sync.
	syncMu sync.Mutex

	mu     sync.Mutex
	synced bool
	// written is the restore input of the last successful sync and live
	// the chains it left; nil live forces a look at the table first.
	written []byte
	live    []string
}

// New registers the informers the enforcer needs.
func New(cfg Config) (*Enforcer, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("network policy: no node name")
	}
	if cfg.Runner == nil {
		cfg.Runner = proxy.IPTables{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MinSyncPeriod <= 0 {
		cfg.MinSyncPeriod = DefaultMinSyncPeriod
	}
	if cfg.SyncPeriod <= 0 {
		cfg.SyncPeriod = 30 * time.Second
	}
	if cfg.Factory == nil {
		cfg.Factory = informer.NewFactory(cfg.Client, informer.FactoryOptions{Logger: cfg.Logger})
	}
	f := cfg.Factory
	e := &Enforcer{
		cfg:        cfg,
		pods:       informer.Shared[api.Pod](f, "", client.ListOptions{}),
		namespaces: informer.Shared[api.Namespace](f, "", client.ListOptions{}),
		policies:   informer.Shared[api.NetworkPolicy](f, "", client.ListOptions{}),
		loop:       syncloop.New(cfg.MinSyncPeriod),
		// kube-proxy's sync metrics, named for this loop.
		syncDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "netpol_sync_policy_rules_duration_seconds",
			Help:    "How long one rewrite of the network policy rules took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		syncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netpol_sync_policy_rules_total", Help: "Rewrites of the network policy rules.",
		}),
		lastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "netpol_sync_policy_rules_last_timestamp_seconds", Help: "When the network policy rules were last written successfully.",
		}),
		isolated: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "netpol_isolated_pods", Help: "Pods on this node isolated by network policies, by direction.",
		}, []string{"direction"}),
	}
	if cfg.Metrics != nil {
		for _, c := range []prometheus.Collector{e.syncDur, e.syncs, e.lastSync, e.isolated} {
			if err := cfg.Metrics.Register(c); err != nil {
				return nil, err
			}
		}
	}
	e.pods.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(*api.Pod, bool) { e.kick() },
		OnUpdate: func(o, n *api.Pod) { e.podChanged(o, n) },
		OnDelete: func(*api.Pod, bool) { e.kick() },
	})
	e.namespaces.AddEventHandler(informer.Handler[api.Namespace]{
		OnAdd: func(*api.Namespace, bool) { e.kick() },
		OnUpdate: func(o, n *api.Namespace) {
			if !equalLabels(o.Labels, n.Labels) {
				e.kick()
			}
		},
		OnDelete: func(*api.Namespace, bool) { e.kick() },
	})
	e.policies.AddEventHandler(informer.Handler[api.NetworkPolicy]{
		OnAdd:    func(*api.NetworkPolicy, bool) { e.kick() },
		OnUpdate: func(o, n *api.NetworkPolicy) { e.kick() },
		OnDelete: func(*api.NetworkPolicy, bool) { e.kick() },
	})
	return e, nil
}

// podChanged kicks a sync only for changes the rules depend on: status
// updates (conditions, container states) are most pod updates and change
// nothing here.
func (e *Enforcer) podChanged(o, n *api.Pod) {
	if podIPv4(o) != podIPv4(n) || o.Spec.NodeName != n.Spec.NodeName || o.Status.Phase != n.Status.Phase ||
		!equalLabels(o.Labels, n.Labels) {
		e.kick()
	}
}

func equalLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (e *Enforcer) kick() { e.loop.Kick() }

// Synced reports whether the rules have been written from synced caches.
func (e *Enforcer) Synced() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.synced
}

// Run syncs the rules until ctx ends. It starts the factory (a shared one
// starts only the informers not running yet). The rules stay when it
// returns: pods keep their isolation while the agent restarts.
func (e *Enforcer) Run(ctx context.Context) error {
	e.cfg.Factory.Start(ctx)
	if !informer.WaitForCacheSync(ctx, e.pods, e.namespaces, e.policies) {
		return ctx.Err()
	}
	e.cfg.Logger.Info("network policy caches synced", "node", e.cfg.NodeName)
	// Every periodic sync reads the table and writes everything; a failed
	// one does the same when retried.
	return e.loop.Run(ctx, syncloop.Periods{Full: e.cfg.SyncPeriod}, "network policy rules", e.cfg.Logger, func(full bool) error {
		if full {
			e.forget()
		}
		err := e.Sync()
		if err != nil {
			e.forget()
		}
		return err
	})
}

// forget makes the next Sync read the table and write everything.
func (e *Enforcer) forget() {
	e.mu.Lock()
	e.written, e.live = nil, nil
	e.mu.Unlock()
}

// Sync computes the rules from the caches and loads them in one
// iptables-restore, unless they equal the last ones written.
func (e *Enforcer) Sync() error {
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	start := time.Now()
	defer e.loop.Ran()
	st := State{Pods: e.pods.Store().List(), Namespaces: e.namespaces.Store().List(), Policies: e.policies.Store().List()}
	pods := Compute(st, e.cfg.NodeName)
	e.mu.Lock()
	written, live := e.written, e.live
	e.mu.Unlock()
	full := live == nil
	if full {
		save, err := e.cfg.Runner.Save("filter")
		if err != nil {
			return fmt.Errorf("reading the filter table: %w", err)
		}
		live = ourChains(save)
	}
	data, now := render(pods, live)
	if !full && bytes.Equal(data, written) {
		return nil
	}
	if err := e.cfg.Runner.Restore(data); err != nil {
		return fmt.Errorf("loading network policy rules: %w", err)
	}
	if full {
		for _, j := range jumps {
			if err := e.cfg.Runner.EnsureRule("filter", j.chain, j.args...); err != nil {
				return fmt.Errorf("jump to %s from %s: %w", chainTop, j.chain, err)
			}
		}
	}
	var in, out int
	for _, p := range pods {
		if p.Ingress != nil {
			in++
		}
		if p.Egress != nil {
			out++
		}
	}
	d := time.Since(start)
	e.syncDur.Observe(d.Seconds())
	e.syncs.Inc()
	e.lastSync.SetToCurrentTime()
	e.isolated.WithLabelValues("ingress").Set(float64(in))
	e.isolated.WithLabelValues("egress").Set(float64(out))
	e.mu.Lock()
	e.synced = true
	e.written, e.live = data, now
	e.mu.Unlock()
	e.cfg.Logger.Debug("synced network policy rules", "pods", len(pods), "ingressIsolated", in, "egressIsolated", out,
		"policies", len(st.Policies), "full", full, "took", d)
	return nil
}

// Cleanup removes the jumps and every chain of ours (--netpol=false on a
// node that enforced before, or a test).
func Cleanup(r proxy.Runner) error {
	var errs []error
	for _, j := range jumps {
		if err := r.DeleteRule("filter", j.chain, j.args...); err != nil {
			errs = append(errs, err)
		}
	}
	save, err := r.Save("filter")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	chains := ourChains(save)
	if len(chains) > 0 {
		var b strings.Builder
		b.WriteString("*filter\n")
		for _, c := range chains {
			b.WriteString(":" + c + " - [0:0]\n")
		}
		for _, c := range chains {
			b.WriteString("-X " + c + "\n")
		}
		b.WriteString("COMMIT\n")
		if err := r.Restore([]byte(b.String())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
