package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/version"
)

// NodeLeaseNamespace holds the nodes' heartbeat Leases.
const NodeLeaseNamespace = "kube-node-lease"

// Beta labels the kubelet still sets beside the stable ones.
const (
	labelOSBeta   = "beta.kubernetes.io/os"
	labelArchBeta = "beta.kubernetes.io/arch"
)

// Config assembles a Manager.
type Config struct {
	Client *client.Client
	// NodeName is the Node's name; Hostname its Hostname address and
	// kubernetes.io/hostname label (both default to NodeName).
	NodeName string
	Hostname string
	// NodeIP is --node-ip; nil means the default route's interface address.
	NodeIP net.IP
	// Labels (--node-labels) are added to the default labels.
	Labels map[string]string
	// Taints (--register-with-taints) are set when the Node is created.
	Taints []api.Taint
	// MaxPods is the pods capacity (default 110).
	MaxPods int
	// SystemReserved and KubeReserved are taken off allocatable.
	SystemReserved, KubeReserved api.ResourceList
	// EvictionHard thresholds (default DefaultThresholds).
	EvictionHard Thresholds
	// RootDir is the kubelet's --root-dir: ephemeral-storage is its filesystem.
	RootDir string
	// RuntimeVersion returns the container runtime's "containerd://1.6.20".
	RuntimeVersion func() (string, error)
	// RuntimeHealthy returns why the runtime cannot run pods (nil: healthy);
	// its error becomes the Ready=False message.
	RuntimeHealthy func() error
	// KubeletPort is status.daemonEndpoints.kubeletEndpoint.Port.
	KubeletPort int
	Recorder    events.Recorder
	Logger      *slog.Logger

	// LeaseDuration is the Lease's leaseDurationSeconds (default 40 s),
	// renewed every LeaseRenewInterval (default 10 s).
	LeaseDuration      time.Duration
	LeaseRenewInterval time.Duration
	// StatusUpdateFrequency is how often the status is computed and written
	// when it changed (default 10 s); StatusReportFrequency how often it is
	// written regardless (default 1 m).
	StatusUpdateFrequency time.Duration
	StatusReportFrequency time.Duration

	// ReadMachine reads the host (default ReadMachine); tests replace it.
	ReadMachine func(rootDir string) (Machine, error)
	// RouteFile is /proc/net/route (for tests).
	RouteFile string
}

// Manager registers the Node and keeps its status and Lease current.
type Manager struct {
	cfg    Config
	nodes  *client.ResourceClient[api.Node, *api.Node]
	leases *client.ResourceClient[api.Lease, *api.Lease]
	log    *slog.Logger

	mu         sync.Mutex
	node       *api.Node // last Node the apiserver returned
	changed    chan struct{}
	lastReport time.Time
	nodeIP     net.IP
}

// New returns a Manager; Run starts it.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil {
		return nil, errors.New("nodestatus: a client is required")
	}
	if cfg.NodeName == "" {
		return nil, errors.New("nodestatus: a node name is required")
	}
	if cfg.Hostname == "" {
		cfg.Hostname = cfg.NodeName
	}
	if cfg.MaxPods <= 0 {
		cfg.MaxPods = 110
	}
	if cfg.EvictionHard == (Thresholds{}) {
		cfg.EvictionHard = DefaultThresholds
	}
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = 40 * time.Second
	}
	if cfg.LeaseRenewInterval <= 0 {
		cfg.LeaseRenewInterval = cfg.LeaseDuration / 4
	}
	if cfg.StatusUpdateFrequency <= 0 {
		cfg.StatusUpdateFrequency = 10 * time.Second
	}
	if cfg.StatusReportFrequency <= 0 {
		cfg.StatusReportFrequency = time.Minute
	}
	if cfg.KubeletPort == 0 {
		cfg.KubeletPort = 10250
	}
	if cfg.ReadMachine == nil {
		cfg.ReadMachine = ReadMachine
	}
	if cfg.RouteFile == "" {
		cfg.RouteFile = "/proc/net/route"
	}
	if cfg.RuntimeVersion == nil {
		cfg.RuntimeVersion = func() (string, error) { return "", errors.New("no container runtime") }
	}
	if cfg.RuntimeHealthy == nil {
		cfg.RuntimeHealthy = func() error { return nil }
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &events.FakeRecorder{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ip, err := chooseIP(cfg.NodeIP, cfg.RouteFile, systemInterfaceAddrs)
	if err != nil {
		return nil, err
	}
	return &Manager{
		cfg:     cfg,
		nodes:   client.Resource[api.Node](cfg.Client),
		leases:  client.Resource[api.Lease](cfg.Client).Namespace(NodeLeaseNamespace),
		log:     cfg.Logger.With("node", cfg.NodeName),
		changed: make(chan struct{}),
		nodeIP:  ip,
	}, nil
}

// NodeIP is the node's InternalIP.
func (m *Manager) NodeIP() net.IP { return m.nodeIP }

// NodeName is the Node's name.
func (m *Manager) NodeName() string { return m.cfg.NodeName }

// Node returns a copy of the Node as last read from or written to the
// apiserver, or nil before registration.
func (m *Manager) Node() *api.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	return api.DeepCopy(m.node)
}

// WaitForNode blocks until the Node is registered and cond (nil: any)
// holds for it, re-checking whenever the manager sees a new version (every
// status update, and on every watch event while Run is running). Part of
// the kubelet waits for spec.podCIDR this way.
func (m *Manager) WaitForNode(ctx context.Context, cond func(*api.Node) bool) (*api.Node, error) {
	for {
		m.mu.Lock()
		n, ch := m.node, m.changed
		m.mu.Unlock()
		if n != nil && (cond == nil || cond(n)) {
			return api.DeepCopy(n), nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		}
	}
}

func (m *Manager) setNode(n *api.Node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.node != nil && n.ResourceVersion != "" && m.node.ResourceVersion == n.ResourceVersion {
		return
	}
	m.node = api.DeepCopy(n)
	close(m.changed)
	m.changed = make(chan struct{})
}

// Run registers the Node (retrying until it succeeds), then heartbeats the
// Lease and updates the status until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	m.cfg.Recorder.Event(m.nodeRef(), api.EventTypeNormal, "Starting", "Starting kubelet.")
	backoff := 100 * time.Millisecond
	for {
		err := m.register(ctx)
		if err == nil {
			break
		}
		m.log.Warn("unable to register node with the API server", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 7*time.Second)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); m.leaseLoop(ctx) }()
	go func() { defer wg.Done(); m.watchNode(ctx) }()
	m.statusLoop(ctx)
	wg.Wait()
	return nil
}

// nodeRef is the object node events are about; before registration it is a
// reference by name, as the kubelet's (whose UID is the node name).
func (m *Manager) nodeRef() *api.Node {
	if n := m.Node(); n != nil {
		return n
	}
	return &api.Node{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: api.ObjectMeta{Name: m.cfg.NodeName, UID: api.UID(m.cfg.NodeName)}}
}

// defaultLabels are the labels the kubelet owns on its Node.
func (m *Manager) defaultLabels() map[string]string {
	return map[string]string{
		api.LabelHostname:   m.cfg.Hostname,
		api.LabelOSStable:   runtime.GOOS,
		api.LabelArchStable: runtime.GOARCH,
		labelOSBeta:         runtime.GOOS,
		labelArchBeta:       runtime.GOARCH,
	}
}

// initialNode is the Node the kubelet creates.
func (m *Manager) initialNode() (*api.Node, error) {
	labels := m.defaultLabels()
	maps.Copy(labels, m.cfg.Labels)
	n := &api.Node{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: api.ObjectMeta{Name: m.cfg.NodeName, Labels: labels},
		Spec:       api.NodeSpec{Taints: append([]api.Taint(nil), m.cfg.Taints...)},
	}
	if _, err := m.computeStatus(n); err != nil {
		return nil, err
	}
	return n, nil
}

// register creates the Node, or reconciles an existing one: the kubelet's
// labels are put back and --node-labels added, while the spec (podCIDR,
// unschedulable, taints) belongs to whoever set it since.
func (m *Manager) register(ctx context.Context) error {
	n, err := m.initialNode()
	if err != nil {
		return err
	}
	created, err := m.nodes.Create(ctx, n)
	if err == nil {
		m.log.Info("successfully registered node")
		m.setNode(created)
		m.mu.Lock()
		m.lastReport = time.Now()
		m.mu.Unlock()
		m.recordConditionEvents(created, setStatusEvents(created))
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node: %w", err)
	}
	for attempt := 0; ; attempt++ {
		existing, err := m.nodes.Get(ctx, m.cfg.NodeName)
		if err != nil {
			return fmt.Errorf("get existing node: %w", err)
		}
		want := m.defaultLabels()
		maps.Copy(want, m.cfg.Labels)
		update := api.DeepCopy(existing)
		if update.Labels == nil {
			update.Labels = map[string]string{}
		}
		dirty := false
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if update.Labels[k] != want[k] {
				update.Labels[k] = want[k]
				dirty = true
			}
		}
		if !dirty {
			m.setNode(existing)
			break
		}
		updated, err := m.nodes.Update(ctx, update)
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if err != nil {
			return fmt.Errorf("reconcile labels of existing node: %w", err)
		}
		m.setNode(updated)
		break
	}
	m.log.Info("node was previously registered")
	// The status of a node registered before is refreshed right away.
	return m.updateStatus(ctx, true)
}

// setStatusEvents lists the initial condition events of a created node.
func setStatusEvents(n *api.Node) []conditionEvent {
	var out []conditionEvent
	for _, c := range n.Status.Conditions {
		out = append(out, conditionEvent{Type: string(c.Type), Reason: eventFor(c)})
	}
	return out
}

func eventFor(c api.NodeCondition) string {
	bad := c.Status == api.ConditionTrue
	switch c.Type {
	case api.NodeReady:
		if c.Status == api.ConditionTrue {
			return eventNodeReady
		}
		return eventNodeNotReady
	case api.NodeMemoryPressure:
		if bad {
			return eventNodeInsufficientMemory
		}
		return eventNodeSufficientMemory
	case api.NodeDiskPressure:
		if bad {
			return eventNodeDiskPressure
		}
		return eventNodeNoDiskPressure
	case api.NodePIDPressure:
		if bad {
			return eventNodeInsufficientPID
		}
		return eventNodeSufficientPID
	}
	return ""
}

func (m *Manager) recordConditionEvents(n *api.Node, evs []conditionEvent) {
	for _, e := range evs {
		if e.Reason == "" {
			continue
		}
		m.cfg.Recorder.Eventf(n, api.EventTypeNormal, e.Reason, "Node %s status is now: %s", m.cfg.NodeName, e.Reason)
	}
}

// computeStatus fills n.Status from a fresh reading of the host.
func (m *Manager) computeStatus(n *api.Node) ([]conditionEvent, error) {
	mach, err := m.cfg.ReadMachine(m.cfg.RootDir)
	if err != nil {
		return nil, fmt.Errorf("read machine info: %w", err)
	}
	reserved := api.ResourceList{}
	for _, rl := range []api.ResourceList{m.cfg.SystemReserved, m.cfg.KubeReserved} {
		for k, q := range rl {
			v := reserved[k]
			v.Add(q)
			reserved[k] = v
		}
	}
	rtErr := m.cfg.RuntimeHealthy()
	rv, vErr := m.cfg.RuntimeVersion()
	if vErr != nil {
		rv = ""
		if rtErr == nil {
			rtErr = fmt.Errorf("container runtime is down: %w", vErr)
		}
	} else if rtErr != nil {
		rtErr = fmt.Errorf("container runtime is not healthy: %w", rtErr)
	}
	if rv == "" && n.Status.NodeInfo.ContainerRuntimeVersion != "" {
		rv = n.Status.NodeInfo.ContainerRuntimeVersion // keep the last known version while the runtime is down
	}
	return setStatus(n, statusInput{
		Machine: mach, MaxPods: m.cfg.MaxPods, Reserved: reserved, Thresholds: m.cfg.EvictionHard,
		NodeIP: m.nodeIP, Hostname: m.cfg.Hostname, RuntimeVersion: rv, KubeletVersion: version.String(),
		KubeletPort: m.cfg.KubeletPort, RuntimeErr: rtErr, Now: time.Now(),
	}), nil
}

// statusLoop recomputes the status every StatusUpdateFrequency and writes
// it when it changed or StatusReportFrequency has passed since the last write.
func (m *Manager) statusLoop(ctx context.Context) {
	m.fastStatusUntilReady(ctx)
	t := time.NewTicker(m.cfg.StatusUpdateFrequency)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		due := time.Since(m.lastReport) >= m.cfg.StatusReportFrequency
		m.mu.Unlock()
		if err := m.updateStatus(ctx, due); err != nil && ctx.Err() == nil {
			m.log.Warn("error updating node status, will retry", "err", err)
		}
	}
}

// fastReadyPoll and fastReadyTimeout bound fastStatusUntilReady (the
// kubelet's 100 ms poll and nodeReadyGracePeriod).
const (
	fastReadyPoll    = 100 * time.Millisecond
	fastReadyTimeout = 2 * time.Minute
)

// fastStatusUntilReady is the kubelet's fastStatusUpdateOnce: until the
// node can first be Ready (runtime up, pod network configured), it checks
// every 100 ms and writes the status as soon as it can, so a new node does
// not wait a whole StatusUpdateFrequency to become schedulable.
func (m *Manager) fastStatusUntilReady(ctx context.Context) {
	deadline := time.Now().Add(fastReadyTimeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if n := m.Node(); n != nil && nodeReady(n) {
			return
		}
		if m.cfg.RuntimeHealthy() == nil {
			if err := m.updateStatus(ctx, false); err != nil && ctx.Err() == nil {
				m.log.Warn("error updating node status, will retry", "err", err)
			} else {
				return
			}
		}
		m.sleep(ctx, fastReadyPoll)
	}
}

func nodeReady(n *api.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == api.NodeReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// updateStatus reads the Node, recomputes its status and writes it through
// nodes/NAME/status if it changed or force is set. Conflicts are retried
// (the kubelet's nodeStatusUpdateRetry is 5).
func (m *Manager) updateStatus(ctx context.Context, force bool) error {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		cur, err := m.nodes.Get(ctx, m.cfg.NodeName)
		if apierrors.IsNotFound(err) {
			// Someone deleted our Node: register it again.
			return m.register(ctx)
		}
		if err != nil {
			lastErr = err
			continue
		}
		m.setNode(cur)
		n := api.DeepCopy(cur)
		evs, err := m.computeStatus(n)
		if err != nil {
			return err
		}
		if !force && !statusChanged(&cur.Status, &n.Status) {
			return nil
		}
		updated, err := m.nodes.UpdateStatus(ctx, n)
		if apierrors.IsConflict(err) {
			lastErr = err
			continue
		}
		if err != nil {
			return fmt.Errorf("update node status: %w", err)
		}
		m.setNode(updated)
		m.mu.Lock()
		m.lastReport = time.Now()
		m.mu.Unlock()
		m.recordConditionEvents(updated, evs)
		return nil
	}
	return fmt.Errorf("update node status: %w", lastErr)
}

// watchNode follows the Node so Node() and WaitForNode see changes made by
// others (podCIDR from nodeipam, taints, cordon) without waiting for the
// next status update. It is an informer on the one Node, as the kubelet's
// own: listed from the apiserver's cache (resourceVersion 0), watched on
// from the last resourceVersion seen, re-listed consistently only after
// 410 Gone, with back-off on errors; a fleet of kubelets restarting at
// once does not send every list to etcd.
func (m *Manager) watchNode(ctx context.Context) {
	inf := informer.New[api.Node](informer.For[api.Node](m.cfg.Client, "", client.ListOptions{FieldSelector: "metadata.name=" + m.cfg.NodeName}),
		informer.Options[api.Node]{Logger: m.log})
	inf.AddEventHandler(informer.Handler[api.Node]{
		OnAdd:    func(n *api.Node, _ bool) { m.setNode(n) },
		OnUpdate: func(_, n *api.Node) { m.setNode(n) },
	})
	inf.Run(ctx)
}

func (m *Manager) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// leaseLoop creates and renews kube-node-lease/NODE.
func (m *Manager) leaseLoop(ctx context.Context) {
	// Failures are retried sooner than the renew interval, backing off from
	// 200 ms, as the kubelet's lease controller does.
	retry := 200 * time.Millisecond
	for {
		if err := m.renewLease(ctx); err != nil && ctx.Err() == nil {
			m.log.Warn("failed to renew the node lease, will retry", "err", err, "in", retry)
			m.sleep(ctx, retry)
			retry = min(retry*2, m.cfg.LeaseRenewInterval)
			continue
		}
		retry = 200 * time.Millisecond
		select {
		case <-ctx.Done():
			return
		case <-time.After(m.cfg.LeaseRenewInterval):
		}
	}
}

// renewLease sets renewTime to now (creating the Lease on first use), with
// the Node as owner so the Lease goes when the Node does.
func (m *Manager) renewLease(ctx context.Context) error {
	now := api.NowMicro()
	holder := m.cfg.NodeName
	dur := int32(m.cfg.LeaseDuration / time.Second)
	l, err := m.leases.Get(ctx, m.cfg.NodeName)
	if apierrors.IsNotFound(err) {
		l = &api.Lease{
			TypeMeta:   api.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: api.ObjectMeta{Name: m.cfg.NodeName, Namespace: NodeLeaseNamespace, OwnerReferences: m.ownerRefs()},
			Spec:       api.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now},
		}
		_, err = m.leases.Create(ctx, l)
		return err
	}
	if err != nil {
		return err
	}
	l = api.DeepCopy(l)
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &dur, &now
	// Own the Lease by the current Node (a re-created Node has a new UID).
	if refs := m.ownerRefs(); len(refs) > 0 && (len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != refs[0].UID) {
		l.OwnerReferences = refs
	}
	_, err = m.leases.Update(ctx, l)
	return err
}

func (m *Manager) ownerRefs() []api.OwnerReference {
	n := m.Node()
	if n == nil || n.UID == "" {
		return nil
	}
	return []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}}
}
