package proxy

import (
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
	"github.com/minik8s/minik8s/kubelet/syncloop"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Proxier.
type Config struct {
	Client *client.Client
	// Factory, if set, is shared with the rest of the node agent; otherwise
	// the proxier makes its own.
	Factory *informer.Factory
	// NodeName is this node's: its endpoints serve the Local traffic
	// policies.
	NodeName string
	// ClusterCIDR is the pod network; traffic from outside it to a
	// ClusterIP is masqueraded. Empty masquerades all service traffic.
	ClusterCIDR string
	// MinSyncPeriod bounds how often rules are rewritten when changes keep
	// coming; SyncPeriod is the periodic resync (rewriting changed chains);
	// FullSyncPeriod the interval of complete rewrites, which on a large
	// nf_tables ruleset take seconds (kube-proxy: 30 s and 1 h).
	MinSyncPeriod, SyncPeriod, FullSyncPeriod time.Duration
	// Mode is the proxy mode, one of Modes: "iptables" (the default, also
	// for "") or "nftables". New refuses any other.
	Mode string
	// Runner runs the iptables tools: the iptables mode's rules, and in
	// nftables mode the removal of the iptables mode's chains.
	Runner Runner
	// NFTables reaches nf_tables: the nftables mode's table, and in
	// iptables mode its removal. Unset, it is the namespace of an
	// IPTables Runner (the host's for the default one); with another
	// Runner (a test's fake) the iptables mode leaves nf_tables alone.
	NFTables *NFTables
	Logger   *slog.Logger
	// Metrics, if set, receives the sync duration histogram.
	Metrics prometheus.Registerer
}

// Proxier keeps the kernel's service rules equal to the API's Services and
// EndpointSlices.
type Proxier struct {
	cfg      Config
	services *informer.Informer[api.Service]
	slices   *informer.Informer[api.EndpointSlice]
	loop     *syncloop.Loop
	health   *healthChecks
	syncDur  prometheus.Histogram
	syncs    prometheus.Counter

	// syncMu serializes Sync.
	syncMu sync.Mutex

	mu     sync.Mutex
	synced bool
	// written holds the nat chain bodies of the last successful sync;
	// nil forces a full rewrite (first sync, periodic resync, after errors).
	written map[string]string
	// writtenFilter is the REJECT rules of the last successful sync.
	writtenFilter []string

	// nft writes the nftables mode's table; nftWritten is what the last
	// successful sync put there (nil: rewrite the table).
	nft        *nftWriter
	nftWritten *nftState
	// nftFragments are the service ports rendered by the last sync.
	nftFragments map[string]*nftFragment
	// otherModeCleaned is set once the other mode's rules were removed.
	otherModeCleaned bool
}

// DefaultMinSyncPeriod is the shortest interval between rule rewrites when
// Config.MinSyncPeriod is unset, and the default of the kubelet's
// --iptables-min-sync-period: the production setting.
const DefaultMinSyncPeriod = 100 * time.Millisecond

// New registers the informers the proxier needs.
func New(cfg Config) (*Proxier, error) {
	if err := ValidateMode(cfg.Mode); err != nil {
		return nil, err
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeIPTables
	}
	if cfg.Runner == nil {
		cfg.Runner = IPTables{}
	}
	if cfg.NFTables == nil {
		if r, ok := cfg.Runner.(IPTables); ok {
			cfg.NFTables = &NFTables{Netns: r.Netns}
		}
	}
	if cfg.Mode == ModeNFTables && cfg.NFTables == nil {
		cfg.NFTables = &NFTables{}
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
	if cfg.FullSyncPeriod <= 0 {
		cfg.FullSyncPeriod = time.Hour
	}
	f := cfg.Factory
	if f == nil {
		f = informer.NewFactory(cfg.Client, informer.FactoryOptions{Logger: cfg.Logger})
		cfg.Factory = f
	}
	p := &Proxier{
		cfg:      cfg,
		services: informer.Shared[api.Service](f, "", client.ListOptions{}),
		slices:   informer.Shared[api.EndpointSlice](f, "", client.ListOptions{}),
		loop:     syncloop.New(cfg.MinSyncPeriod),
		health:   newHealthChecks(cfg.Logger),
		syncDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "kubeproxy_sync_proxy_rules_duration_seconds",
			Help:    "How long one rewrite of the service rules took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		syncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kubeproxy_sync_proxy_rules_total", Help: "Rewrites of the service rules.",
		}),
	}
	if cfg.Mode == ModeNFTables {
		p.nft = newNFTWriter(*cfg.NFTables)
	}
	if cfg.Metrics != nil {
		for _, c := range []prometheus.Collector{p.syncDur, p.syncs} {
			if err := cfg.Metrics.Register(c); err != nil {
				return nil, err
			}
		}
	}
	p.services.AddEventHandler(informer.Handler[api.Service]{
		OnAdd:    func(*api.Service, bool) { p.kick() },
		OnUpdate: func(o, n *api.Service) { p.kick() },
		OnDelete: func(*api.Service, bool) { p.kick() },
	})
	p.slices.AddEventHandler(informer.Handler[api.EndpointSlice]{
		OnAdd:    func(*api.EndpointSlice, bool) { p.kick() },
		OnUpdate: func(o, n *api.EndpointSlice) { p.kick() },
		OnDelete: func(*api.EndpointSlice, bool) { p.kick() },
	})
	return p, nil
}

func (p *Proxier) kick() { p.loop.Kick() }

// Synced reports whether the rules have been written at least once from
// synced caches (the node agent's readiness).
func (p *Proxier) Synced() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.synced
}

// Run syncs rules until ctx ends. It starts the factory if it made it.
// Changes usually come in bursts (a rollout): the loop waits out the
// minimum period since the last write, then writes everything once; the
// periodic resync rewrites changed chains, the full one everything.
func (p *Proxier) Run(ctx context.Context) error {
	p.cfg.Factory.Start(ctx)
	defer p.health.close()
	if !informer.WaitForCacheSync(ctx, p.services, p.slices) {
		return ctx.Err()
	}
	return p.loop.Run(ctx, syncloop.Periods{Resync: p.cfg.SyncPeriod, Full: p.cfg.FullSyncPeriod}, "service rules", p.cfg.Logger,
		func(full bool) error {
			if full {
				p.mu.Lock()
				p.written, p.nftWritten = nil, nil
				p.mu.Unlock()
			}
			return p.Sync()
		})
}

// Sync writes the rules from the informers' caches: the per-service chains
// that changed since the last sync, or everything after a resync or error.
func (p *Proxier) Sync() error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	defer p.loop.Ran()
	return p.syncFrom(p.services.Store().List(), p.slices.Store().List())
}

// syncFrom writes the rules for services and slices (Sync's body; the
// benchmark feeds it directly).
func (p *Proxier) syncFrom(services []*api.Service, slices []*api.EndpointSlice) error {
	start := time.Now()
	p.mu.Lock()
	prev, prevFilter := p.written, p.writtenFilter
	p.written = nil // until this sync succeeds
	p.mu.Unlock()
	sps := buildServicePorts(services, slices, p.cfg.NodeName)
	if err := p.cleanupOtherMode(); err != nil {
		return err
	}
	if p.nft != nil {
		return p.syncNFT(start, sps)
	}
	rs := render(sps, p.cfg.ClusterCIDR)
	var existing []string
	if prev == nil {
		save, err := p.cfg.Runner.Save("nat")
		if err != nil {
			return err
		}
		existing = existingChains(save)
	} else {
		for c := range prev {
			if isServiceChain(c) {
				existing = append(existing, c)
			}
		}
	}
	// The tables are committed one after the other. So that no packet
	// falls between them (no DNAT yet or any more, and no REJECT either),
	// REJECTs that go away stay until the nat rules replacing them are in:
	// a DNATed packet no longer matches a REJECT on the ClusterIP.
	union := unionRules(prevFilter, rs.filter)
	steps := [][]byte{}
	if prev == nil || len(union) != len(prevFilter) {
		steps = append(steps, filterRestore(union))
	}
	steps = append(steps, rs.natRestore(prev, existing))
	if len(union) != len(rs.filter) {
		steps = append(steps, filterRestore(rs.filter))
	}
	for _, data := range steps {
		if err := p.cfg.Runner.Restore(data); err != nil {
			return fmt.Errorf("loading service rules: %w", err)
		}
	}
	if prev == nil {
		for _, j := range jumps {
			if err := p.cfg.Runner.EnsureRule(j.table, j.chain, j.args...); err != nil {
				return fmt.Errorf("jump to %s from %s/%s: %w", j.args[len(j.args)-1], j.table, j.chain, err)
			}
		}
	}
	d := time.Since(start)
	p.syncDur.Observe(d.Seconds())
	p.syncs.Inc()
	p.mu.Lock()
	p.synced = true
	p.written = rs.bodies()
	p.writtenFilter = rs.filter
	p.mu.Unlock()
	p.health.sync(sps)
	p.cfg.Logger.Debug("synced service rules", "servicePorts", len(sps), "full", prev == nil, "took", d)
	return nil
}

// syncNFT is Sync in nftables mode: one netlink transaction, the whole
// table when nothing was written yet, else the changes.
func (p *Proxier) syncNFT(start time.Time, sps []*servicePort) error {
	p.mu.Lock()
	prev := p.nftWritten
	p.nftWritten = nil // until this sync succeeds
	p.mu.Unlock()
	rs, fragments := renderNFTCached(sps, p.cfg.ClusterCIDR, p.nftFragments)
	rendered := time.Since(start)
	next, err := p.nft.write(rs, prev)
	if err != nil {
		return err
	}
	p.nftFragments = fragments
	d := time.Since(start)
	p.syncDur.Observe(d.Seconds())
	p.syncs.Inc()
	p.mu.Lock()
	p.synced = true
	p.nftWritten = next
	p.mu.Unlock()
	p.health.sync(sps)
	p.cfg.Logger.Debug("synced service rules", "mode", ModeNFTables, "servicePorts", len(sps), "full", prev == nil, "took", d, "rendering", rendered)
	return nil
}

// cleanupOtherMode removes, once, what the other proxy mode left behind
// (kube-proxy does so at start): the iptables mode's chains in nftables
// mode, the table "kube-proxy" in iptables mode.
func (p *Proxier) cleanupOtherMode() error {
	if p.otherModeCleaned {
		return nil
	}
	var err error
	if p.cfg.Mode == ModeNFTables {
		// A node without the iptables tools has no such chains either.
		if err := cleanupIPTables(p.cfg.Runner); err != nil {
			p.cfg.Logger.Warn("could not remove the iptables mode's rules", "err", err)
		}
	} else if p.cfg.NFTables != nil {
		err = CleanupNFTables(*p.cfg.NFTables)
	}
	if err != nil {
		return fmt.Errorf("removing the other proxy mode's rules: %w", err)
	}
	p.otherModeCleaned = true
	return nil
}

// FullSync forgets what was written, so the next Sync rewrites everything.
func (p *Proxier) FullSync() error {
	p.mu.Lock()
	p.written, p.nftWritten = nil, nil
	p.mu.Unlock()
	return p.Sync()
}

// Cleanup removes every rule and chain the proxier made, in either mode:
// the iptables mode's chains through r and, when r is IPTables, the
// nftables mode's table in the same network namespace.
func Cleanup(r Runner) error {
	err := cleanupIPTables(r)
	if ipt, ok := r.(IPTables); ok {
		err = errors.Join(err, CleanupNFTables(NFTables{Netns: ipt.Netns}))
	}
	return err
}

// cleanupIPTables removes the iptables mode's jumps and KUBE- chains.
func cleanupIPTables(r Runner) error {
	var errs []error
	for _, j := range jumps {
		if err := r.DeleteRule(j.table, j.chain, j.args...); err != nil {
			errs = append(errs, err)
		}
	}
	var b strings.Builder
	for _, table := range []string{"nat", "filter"} {
		save, err := r.Save(table)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var chains []string
		for _, line := range strings.Split(string(save), "\n") {
			if name, ok := strings.CutPrefix(line, ":KUBE-"); ok {
				name, _, _ = strings.Cut(name, " ")
				chains = append(chains, "KUBE-"+name)
			}
		}
		if len(chains) == 0 {
			continue
		}
		b.WriteString("*" + table + "\n")
		for _, c := range chains {
			b.WriteString(":" + c + " - [0:0]\n")
		}
		for _, c := range chains {
			b.WriteString("-X " + c + "\n")
		}
		b.WriteString("COMMIT\n")
	}
	if b.Len() > 0 {
		if err := r.Restore([]byte(b.String())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
