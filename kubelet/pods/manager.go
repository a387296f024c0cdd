package pods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/kubelet/probes"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/staticpods"
	"github.com/minik8s/minik8s/kubelet/token"
	"github.com/prometheus/client_golang/prometheus"
)

// Options configure the pod manager.
type Options struct {
	NodeName string
	// NodeIP is the node's InternalIP (the pods' hostIP); empty means take
	// it from the Node's status.
	NodeIP string
	// RootDir holds per-pod files (volumes, /etc/hosts, resolv.conf).
	RootDir string
	// LogsDir holds container logs (/var/log/pods).
	LogsDir       string
	ClusterDNS    []string
	ClusterDomain string
	// ResolvConf is the host resolver file used by dnsPolicy Default.
	ResolvConf string
	// ResyncPeriod is how often every pod is re-synced without events.
	ResyncPeriod time.Duration
	// Back-off bounds for restarts (CrashLoopBackOff) and image pulls.
	BackoffInitial, BackoffMax, BackoffReset time.Duration
	Logger                                   *slog.Logger
	// ParallelPodStarts bounds how many pods are set up (sandbox, network,
	// first containers) at the same time (default 4).
	ParallelPodStarts int
	// Registry receives the kubelet's pod metrics; nil skips them.
	Registry prometheus.Registerer
	// VolumeResyncPeriod is how often the API-backed volumes of running
	// pods (configMap, secret, downwardAPI, projected) are written again,
	// picking up changed objects and refreshed tokens (default 1 minute,
	// kube's volume manager resync).
	VolumeResyncPeriod time.Duration
	// Tokens issues the service account tokens of projected volumes; nil
	// means a token manager over the kubelet's client.
	Tokens *token.Manager
}

// DefaultOptions are kube's defaults.
func DefaultOptions() Options {
	return Options{
		RootDir: "/var/lib/kubelet", LogsDir: "/var/log/pods", ClusterDomain: "cluster.local",
		ResolvConf: "/etc/resolv.conf", ResyncPeriod: 10 * time.Second,
		BackoffInitial: 10 * time.Second, BackoffMax: 300 * time.Second,
		VolumeResyncPeriod: time.Minute,
	}
}

// Manager keeps the node's containers in line with the pods bound to it.
type Manager struct {
	opts    Options
	client  *client.Client
	rt      runtime.Runtime
	net     Network
	rec     events.Recorder
	log     *slog.Logger
	probes  *probes.Manager
	tokens  *token.Manager
	backoff *Backoff
	metrics *metrics

	pods  *informer.Informer[api.Pod]
	nodes *informer.Informer[api.Node]
	// services give the pods' service environment variables.
	services *informer.Informer[api.Service]
	// certs serve the clusterTrustBundle and podCertificate volume sources.
	certs certSources

	mu      sync.Mutex
	workers map[string]*worker // by pod UID
	// admitMu serializes pod admission; admissions are its decisions by
	// pod UID.
	admitMu    sync.Mutex
	admissions map[string]*admission
	// startSlots bounds concurrent pod set-ups.
	startSlots chan struct{}
	ctx        context.Context
	wg         sync.WaitGroup

	// static are the static pods by UID (static.go); removedStatic those
	// removed whose containers are still being stopped.
	staticMu      sync.Mutex
	static        map[string]*api.Pod
	removedStatic map[string]*api.Pod
	// apiSynced: the API's pods are known and may run; synced is closed
	// then.
	apiSynced     atomic.Bool
	synced        chan struct{}
	mirrorCleanup chan struct{}
	// adoptedStatic are the static pods whose containers adoptStatic
	// re-adopted (before the API's pods are known; Run's goroutine only).
	adoptedStatic map[string]bool
}

// New returns a manager; start it with Run. rt may also be a
// runtime.Adopter (containers a previous kubelet left running are
// re-attached), a runtime.Execer (exec and exec probes), a runtime.Attacher
// (attach) and a runtime.CgroupCleaner.
func New(c *client.Client, rt runtime.Runtime, nm Network, rec events.Recorder, opts Options) *Manager {
	d := DefaultOptions()
	if opts.RootDir == "" {
		opts.RootDir = d.RootDir
	}
	if opts.LogsDir == "" {
		opts.LogsDir = d.LogsDir
	}
	if opts.ClusterDomain == "" {
		opts.ClusterDomain = d.ClusterDomain
	}
	if opts.ResolvConf == "" {
		opts.ResolvConf = d.ResolvConf
	}
	if opts.ResyncPeriod <= 0 {
		opts.ResyncPeriod = d.ResyncPeriod
	}
	if opts.BackoffInitial <= 0 {
		opts.BackoffInitial = d.BackoffInitial
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = d.BackoffMax
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ParallelPodStarts <= 0 {
		opts.ParallelPodStarts = 4
	}
	if opts.VolumeResyncPeriod <= 0 {
		opts.VolumeResyncPeriod = d.VolumeResyncPeriod
	}
	if opts.Tokens == nil {
		opts.Tokens = token.NewManager(token.APIFetcher{Client: c})
	}
	return &Manager{
		startSlots: make(chan struct{}, opts.ParallelPodStarts),
		opts:       opts, client: c, rt: rt, net: nm, rec: rec, log: opts.Logger, tokens: opts.Tokens,
		backoff: NewBackoff(opts.BackoffInitial, opts.BackoffMax, opts.BackoffReset),
		metrics: newMetrics(opts.Registry),
		workers: map[string]*worker{}, admissions: map[string]*admission{},
		static: map[string]*api.Pod{}, removedStatic: map[string]*api.Pod{}, mirrorCleanup: make(chan struct{}, 1),
		synced: make(chan struct{}),
	}
}

// Synced is closed once Run has listed the node's pods, its Node and the
// Services (its informers synced) and re-adopted the runtime's
// containers: from then on the API's pods run. Hollow nodes end their
// start phase on it.
func (m *Manager) Synced() <-chan struct{} { return m.synced }

// execAdapter lets probes run commands through the runtime.
type execAdapter struct{ rt runtime.Runtime }

func (e execAdapter) Exec(ctx context.Context, id string, cmd []string, stdout, stderr io.Writer) (int, error) {
	x, ok := e.rt.(runtime.Execer)
	if !ok {
		return -1, errExecUnsupported
	}
	return x.Exec(ctx, id, cmd, false, nil, stdout, stderr, nil)
}

var errExecUnsupported = errors.New("the container runtime cannot exec in containers")

// OnContainerExit is the runtime's exit callback: it wakes the pod's worker.
func (m *Manager) OnContainerExit(podUID, _ string) { m.kick(podUID) }

// Run watches the node's pods and syncs them until ctx ends. On start it
// re-adopts the containers a previous kubelet left running and removes
// those of pods that no longer exist.
func (m *Manager) Run(ctx context.Context) error {
	m.probes = probes.NewManager(ctx, execAdapter{m.rt}, m.rec, m.log, m.kick)
	f := informer.NewFactory(m.client, informer.FactoryOptions{Logger: m.log})
	m.pods = informer.Shared[api.Pod](f, "", client.ListOptions{FieldSelector: "spec.nodeName=" + m.opts.NodeName})
	m.nodes = informer.Shared[api.Node](f, "", client.ListOptions{FieldSelector: "metadata.name=" + m.opts.NodeName})
	m.services = informer.Shared[api.Service](f, "", client.ListOptions{})
	m.nodes.AddEventHandler(informer.Handler[api.Node]{
		OnAdd:    func(n *api.Node, _ bool) { m.onNode(n) },
		OnUpdate: func(_, n *api.Node) { m.onNode(n) },
	})
	f.Start(ctx)
	// Static pods run at once, before (and without) the apiserver: their
	// containers a previous kubelet left are re-adopted first.
	m.adoptStatic(ctx)
	m.mu.Lock()
	m.ctx = ctx
	m.mu.Unlock()
	for _, p := range m.staticPods() {
		m.kick(string(p.UID))
	}
	if !f.WaitForCacheSync(ctx) {
		m.wg.Wait()
		return ctx.Err()
	}
	// A runtime that does not answer yet (a CRI runtime starting after
	// the kubelet) is waited for: the node reports it down meanwhile.
	for backoff := time.Second; ; backoff = min(2*backoff, 30*time.Second) {
		err := m.adopt(ctx)
		if err == nil {
			break
		}
		m.log.Warn("list the runtime's containers, will retry", "err", err, "retryIn", backoff)
		select {
		case <-ctx.Done():
			m.wg.Wait()
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
	// The API's pods start only now (kick ignores them before): none may
	// create a container while the previous kubelet's are being
	// re-adopted.
	if !m.apiSynced.Swap(true) {
		close(m.synced)
	}
	for _, p := range m.allPods() {
		m.kick(string(p.UID))
	}
	m.pods.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, _ bool) { m.onAPIPod(p) },
		OnUpdate: func(_, p *api.Pod) { m.onAPIPod(p) },
		OnDelete: func(p *api.Pod, _ bool) { m.onAPIPod(p) },
	})
	m.wg.Go(func() { m.runMirrorCleanup(ctx, m.opts.ResyncPeriod) })
	m.kickMirrorCleanup()
	t := time.NewTicker(m.opts.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			m.wg.Wait()
			return nil
		case <-t.C:
			m.backoff.GC()
			m.updateGauges(ctx)
			for _, p := range m.allPods() {
				m.kick(string(p.UID))
			}
		}
	}
}

func (m *Manager) onNode(n *api.Node) {
	if n.Spec.PodCIDR == "" {
		return
	}
	if err := m.net.Configure(n.Spec.PodCIDR); err != nil {
		m.log.Error("configure pod network", "podCIDR", n.Spec.PodCIDR, "err", err)
		return
	}
	// Pods waiting for the network can proceed.
	for _, p := range m.allPods() {
		m.kick(string(p.UID))
	}
}

// currentPodIP is the IP of a pod whose sandbox recorded ip: a
// host-network pod has the node's current address, which changes when the
// node comes back with another (a node container restarted), so its
// probes, status and status.podIP env follow the node rather than the
// address at sandbox creation.
func (m *Manager) currentPodIP(pod *api.Pod, ip string) string {
	if pod.Spec.HostNetwork {
		if host := m.hostIP(); host != "" {
			return host
		}
	}
	return ip
}

func (m *Manager) hostIP() string {
	if m.opts.NodeIP != "" {
		return m.opts.NodeIP
	}
	if m.nodes != nil {
		for _, n := range m.nodes.Store().List() {
			for _, a := range n.Status.Addresses {
				if a.Type == api.NodeInternalIP {
					return a.Address
				}
			}
		}
	}
	return ""
}

// nodeAllocatable is the node's status.allocatable, as last seen.
func (m *Manager) nodeAllocatable() api.ResourceList {
	if m.nodes != nil {
		for _, n := range m.nodes.Store().List() {
			return n.Status.Allocatable
		}
	}
	return nil
}

// adopt re-attaches to the running containers of existing pods and removes
// the containers and networks of pods that are gone.
func (m *Manager) adopt(ctx context.Context) error {
	cs, err := m.rt.ListPodContainers(ctx, "")
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, p := range m.allPods() {
		known[string(p.UID)] = true
	}
	orphans := map[string][]runtime.Container{}
	for _, c := range cs {
		if m.adoptedStatic[c.PodUID] {
			// adoptStatic had these.
			continue
		}
		if !known[c.PodUID] {
			orphans[c.PodUID] = append(orphans[c.PodUID], c)
			continue
		}
		if a, ok := m.rt.(runtime.Adopter); ok && c.State == runtime.StateRunning {
			if err := a.Adopt(ctx, c.ID); err != nil {
				m.log.Warn("re-adopt container", "pod", c.PodNamespace+"/"+c.PodName, "container", c.Name, "id", c.ID, "err", err)
			}
		}
	}
	for uid, cs := range orphans {
		m.log.Info("removing the containers of a pod that no longer exists", "pod", cs[0].PodNamespace+"/"+cs[0].PodName,
			"podUID", uid, "containers", len(cs))
		m.teardown(ctx, uid, cs[0].PodNamespace, cs[0].PodName, cs, 0)
	}
	m.log.Info("adopted containers", "containers", len(cs), "orphanPods", len(orphans))
	return nil
}

// kick wakes (or starts) the worker of a pod.
func (m *Manager) kick(uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx == nil || m.ctx.Err() != nil {
		return
	}
	if !m.apiSynced.Load() && !m.isStaticUID(uid) {
		return
	}
	w := m.workers[uid]
	if w == nil {
		w = &worker{m: m, uid: uid, wake: make(chan struct{}, 1)}
		m.workers[uid] = w
		m.wg.Add(1)
		go w.run(m.ctx)
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (m *Manager) workerDone(uid string) {
	m.mu.Lock()
	delete(m.workers, uid)
	m.mu.Unlock()
}

// worker serializes the syncs of one pod.
type worker struct {
	m    *Manager
	uid  string
	wake chan struct{}
	// state kept between syncs
	mu         sync.Mutex
	waiting    map[string]*api.ContainerStateWaiting
	pullFailed map[string]time.Time
	networkErr string
	// mountErr is the last volume set-up failure (logged once per message).
	mountErr string
	// volumesAt is when the pod's volumes were last written.
	volumesAt time.Time
	// terminal is the phase once the pod finished (the cache may lag).
	terminal api.PodPhase
	// admitted: the pod passed the kubelet's admission; rejected: it did
	// not, and never runs.
	admitted bool
	rejected *rejection
	// deadlineExceeded: the pod ran past its activeDeadlineSeconds and was
	// stopped (Failed, DeadlineExceeded).
	deadlineExceeded bool
	// evictOrder is the eviction manager's order (guarded by mu: it is
	// given from another goroutine); evicted is it once the worker
	// carried it out (the pod is then Failed, Evicted, for good).
	evictOrder *evictionOrder
	evicted    *evictionOrder
	podIP      string
	firstSeen  time.Time
	observed   bool
	lastSent   string
	// lastSentTo is the pod lastSent went to (a static pod's mirror pod
	// changes).
	lastSentTo api.UID
	// lastStatus is the status last written.
	lastStatus *api.PodStatus
	startTime  *api.Time
	// resizePending and resizeInProgress are the pod's resize conditions
	// (nil: not set); see resize.go.
	resizePending, resizeInProgress *api.PodCondition
}

func (w *worker) run(ctx context.Context) {
	defer w.m.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-timer.C:
		}
		next, done := w.m.syncPod(ctx, w)
		if done {
			w.m.mu.Lock()
			// A pod re-created with the same UID is impossible; but an
			// event may have arrived while finishing: drain and exit.
			delete(w.m.workers, w.uid)
			w.m.mu.Unlock()
			return
		}
		if next <= 0 || next > w.m.opts.ResyncPeriod {
			next = w.m.opts.ResyncPeriod
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// GetPodByName returns the pod namespace/name bound to this node.
// A static pod is found under its name (its mirror pod's).
func (m *Manager) GetPodByName(namespace, name string) (*api.Pod, bool) {
	if p := m.staticByName(namespace, name); p != nil {
		return p, true
	}
	p := m.apiPodByName(namespace, name)
	if p == nil || staticpods.IsMirror(p) {
		return nil, false
	}
	return p, true
}

// GetPods returns every pod bound to this node: the static pods, not
// their mirror pods.
func (m *Manager) GetPods() []*api.Pod { return m.allPods() }

// ErrContainerNotFound is wrapped by Exec when the container does not run.
var ErrContainerNotFound = errors.New("container not found")

// Exec runs cmd in the running container named container of pod podUID.
func (m *Manager) Exec(ctx context.Context, podUID, container string, cmd []string, tty bool,
	stdin io.Reader, stdout, stderr io.Writer, resize <-chan runtime.TerminalSize) (int, error) {
	x, ok := m.rt.(runtime.Execer)
	if !ok {
		return -1, errExecUnsupported
	}
	id, err := m.RunningContainerID(ctx, podUID, container)
	if err != nil {
		return -1, err
	}
	return x.Exec(ctx, id, cmd, tty, stdin, stdout, stderr, resize)
}

// RunningContainerID is the runtime's ID of the running instance of a
// pod's container.
func (m *Manager) RunningContainerID(ctx context.Context, podUID, container string) (string, error) {
	cs, err := m.rt.ListPodContainers(ctx, podUID)
	if err != nil {
		return "", err
	}
	for _, c := range cs {
		if c.Kind == runtime.KindContainer && c.Name == container && c.State == runtime.StateRunning {
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("container %q of pod %s is not running: %w", container, podUID, ErrContainerNotFound)
}
