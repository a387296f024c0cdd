package scheduling

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minik8s/minik8s/api"
	icache "github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/scheduler/cache"
	"github.com/minik8s/minik8s/scheduler/framework"
	"github.com/minik8s/minik8s/scheduler/plugins"
	"github.com/minik8s/minik8s/scheduler/plugins/defaultpreemption"
	"github.com/minik8s/minik8s/scheduler/plugins/nodeready"
	"github.com/minik8s/minik8s/scheduler/plugins/nodevolumelimits"
	"github.com/minik8s/minik8s/scheduler/plugins/volumebinding"
	"github.com/minik8s/minik8s/scheduler/plugins/volumerestrictions"
	"github.com/minik8s/minik8s/scheduler/plugins/volumezone"
	"github.com/minik8s/minik8s/scheduler/queue"
)

// DefaultSchedulerName is the name pods select with spec.schedulerName
// (empty means this one).
const DefaultSchedulerName = "default-scheduler"

// Config configures a Scheduler.
type Config struct {
	Client   *client.Client
	Recorder events.Recorder
	Logger   *slog.Logger
	// Registry receives the metrics (nil: not registered).
	Registry prometheus.Registerer
	// SchedulerName is the profile's name, DefaultSchedulerName by default.
	SchedulerName string
	// PercentageOfNodesToScore bounds the feasible nodes searched for in
	// large clusters; 0 means kube's adaptive default.
	PercentageOfNodesToScore int32
	PodInitialBackoff        time.Duration
	PodMaxBackoff            time.Duration
	// Parallelism is the number of goroutines filtering and scoring nodes
	// (framework.DefaultParallelism by default).
	Parallelism int
	// AssumedPodTTL is cache.DefaultAssumedPodTTL by default.
	AssumedPodTTL time.Duration
	// BindTimeout bounds one binding request (30 s by default).
	BindTimeout time.Duration
	// VolumeBindTimeout bounds the VolumeBinding plugin's wait for a
	// pod's claims to be bound (kube's VolumeBindingArgs
	// bindTimeoutSeconds; volumebinding.DefaultBindTimeout, 600 s, by
	// default).
	VolumeBindTimeout time.Duration
}

// Stats are running totals, for tests and benchmarks.
type Stats struct {
	Scheduled, Unschedulable, Errors atomic.Int64
	// BindConflicts counts bindings the apiserver refused because the pod
	// was bound already or gone (dropped, not retried).
	BindConflicts atomic.Int64
	// Abandoned counts bindings not completed because the scheduler stopped.
	Abandoned atomic.Int64
}

// Scheduler schedules the pending pods of one profile.
type Scheduler struct {
	cfg      Config
	log      *slog.Logger
	pods     *client.ResourceClient[api.Pod, *api.Pod]
	recorder events.Recorder

	// Cache and Queue are exported for tests and the health checks.
	Cache *cache.Cache
	Queue *queue.PriorityQueue
	// Nominator holds the pods nominated to nodes by preemption.
	Nominator *queue.Nominator
	Stats     Stats

	fwk       *framework.Framework
	snapshot  *cache.Snapshot
	metrics   *Metrics
	podLister icache.Lister[api.Pod]
	pdbLister icache.Lister[api.PodDisruptionBudget]
	factory   *informer.Factory
	// csiNodes, csiDrivers and attachments are NodeVolumeLimits' listers.
	csiNodes    icache.Lister[api.CSINode]
	csiDrivers  icache.Lister[api.CSIDriver]
	attachments icache.Lister[api.VolumeAttachment]
	started     bool
	synced      atomic.Bool

	nextStartNodeIndex int
	statusBuf          []*framework.Status
	background         sync.WaitGroup
}

var _ defaultpreemption.Handle = (*Scheduler)(nil)

// New builds a scheduler with the default plugins.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SchedulerName == "" {
		cfg.SchedulerName = DefaultSchedulerName
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = framework.DefaultParallelism
	}
	if cfg.BindTimeout <= 0 {
		cfg.BindTimeout = 30 * time.Second
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &events.FakeRecorder{}
	}
	s := &Scheduler{
		cfg:       cfg,
		log:       cfg.Logger,
		pods:      client.Resource[api.Pod](cfg.Client),
		recorder:  cfg.Recorder,
		Cache:     cache.New(cfg.AssumedPodTTL, cfg.Logger),
		Queue:     queue.New(queue.Options{InitialBackoff: cfg.PodInitialBackoff, MaxBackoff: cfg.PodMaxBackoff}),
		snapshot:  cache.NewSnapshot(),
		Nominator: queue.NewNominator(),
	}
	s.metrics = NewMetrics(s.Queue)
	volumes := s.newInformers()
	preemption := defaultpreemption.New(s, defaultpreemption.NewAPIEvictor(cfg.Client, cfg.Recorder), s.metrics.Preemption, cfg.Logger)
	volumeBinding := volumebinding.New(volumes, volumebinding.NewAPIWriter(cfg.Client), cfg.VolumeBindTimeout, cfg.Logger)
	volumeRestrictions := volumerestrictions.New(volumes.Claims, s)
	volumeLimits := nodevolumelimits.New(nodevolumelimits.Listers{Claims: volumes.Claims, Volumes: volumes.Volumes, Classes: volumes.Classes, CSINodes: s.csiNodes, Attachments: s.attachments, CSIDrivers: s.csiDrivers}, cfg.Logger)
	volumeZone := volumezone.New(volumezone.Listers{Claims: volumes.Claims, Volumes: volumes.Volumes, Classes: volumes.Classes})
	s.fwk = framework.New(append(plugins.Default(s, volumeRestrictions, volumeLimits, volumeBinding, volumeZone), framework.WeightedPlugin{Plugin: preemption}), cfg.Parallelism)
	s.fwk.SetPodNominator(s.Nominator)
	if cfg.Registry != nil {
		if err := s.metrics.Register(cfg.Registry); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// SnapshotSharedLister implements framework.Handle.
func (s *Scheduler) SnapshotSharedLister() framework.SharedLister { return s.snapshot }

// Parallelizer implements defaultpreemption.Handle.
func (s *Scheduler) Parallelizer() framework.Parallelizer { return s.fwk.Parallelizer() }

// RunFilterPluginsWithNominatedPods implements defaultpreemption.Handle.
func (s *Scheduler) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *api.Pod, node *framework.NodeInfo) *framework.Status {
	return s.fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, node)
}

// RunPreFilterExtensionAddPod implements defaultpreemption.Handle.
func (s *Scheduler) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, pod *api.Pod, podToAdd *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	return s.fwk.RunPreFilterExtensionAddPod(ctx, state, pod, podToAdd, node)
}

// RunPreFilterExtensionRemovePod implements defaultpreemption.Handle.
func (s *Scheduler) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, pod *api.Pod, podToRemove *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	return s.fwk.RunPreFilterExtensionRemovePod(ctx, state, pod, podToRemove, node)
}

// PodDisruptionBudgets implements defaultpreemption.Handle.
func (s *Scheduler) PodDisruptionBudgets() []*api.PodDisruptionBudget {
	return s.pdbLister.List(nil)
}

// NominatedPodsForNode implements defaultpreemption.Handle.
func (s *Scheduler) NominatedPodsForNode(node string) []*api.Pod {
	return s.Nominator.NominatedPodsForNode(node)
}

// NominatedNode implements defaultpreemption.Handle.
func (s *Scheduler) NominatedNode(pod *api.Pod) string { return s.Nominator.NominatedNode(pod) }

// HasSynced reports whether the informers delivered their first lists.
func (s *Scheduler) HasSynced() bool { return s.synced.Load() }

// newInformers registers the informers (started by StartInformers) and
// their handlers, and returns the listers of the VolumeBinding plugin.
// Changes to claims, volumes and classes can make a pod waiting for its
// volumes fit, so they move the unschedulable pods back, as kube's
// VolumeBinding events do.
func (s *Scheduler) newInformers() volumebinding.Listers {
	s.factory = informer.NewFactory(s.cfg.Client, informer.FactoryOptions{Logger: s.log, Transform: informer.StripManagedFields})
	podInf := informer.Shared[api.Pod](s.factory, "", client.ListOptions{})
	nodeInf := informer.Shared[api.Node](s.factory, "", client.ListOptions{})
	// Preemption respects PodDisruptionBudgets, as kube-scheduler's.
	s.pdbLister = informer.Shared[api.PodDisruptionBudget](s.factory, "", client.ListOptions{}).Lister()
	s.podLister = podInf.Lister()
	podInf.AddEventHandler(informer.Handler[api.Pod]{
		OnAdd:    func(p *api.Pod, _ bool) { s.onPodAdd(p) },
		OnUpdate: s.onPodUpdate,
		OnDelete: func(p *api.Pod, _ bool) { s.onPodDelete(p) },
	})
	nodeInf.AddEventHandler(informer.Handler[api.Node]{
		OnAdd:    func(n *api.Node, _ bool) { s.Cache.AddNode(n); s.Queue.MoveAllToActiveOrBackoffQueue() },
		OnUpdate: s.onNodeUpdate,
		OnDelete: func(n *api.Node, _ bool) { s.Cache.RemoveNode(n) },
	})
	claimInf := informer.Shared[api.PersistentVolumeClaim](s.factory, "", client.ListOptions{})
	volumeInf := informer.Shared[api.PersistentVolume](s.factory, "", client.ListOptions{})
	classInf := informer.Shared[api.StorageClass](s.factory, "", client.ListOptions{})
	claimInf.AddEventHandler(storageHandler[api.PersistentVolumeClaim](s))
	volumeInf.AddEventHandler(storageHandler[api.PersistentVolume](s))
	classInf.AddEventHandler(storageHandler[api.StorageClass](s))
	// NodeVolumeLimits' events: a CSINode added, or updated with a
	// driver's count grown (kube's queueing hint); a VolumeAttachment
	// deleted.
	csiNodeInf := informer.Shared[api.CSINode](s.factory, "", client.ListOptions{})
	csiNodeInf.AddEventHandler(informer.Handler[api.CSINode]{
		OnAdd: func(*api.CSINode, bool) { s.Queue.MoveAllToActiveOrBackoffQueue() },
		OnUpdate: func(old, cur *api.CSINode) {
			if nodevolumelimits.CSINodeUpdateQueues(old, cur) {
				s.Queue.MoveAllToActiveOrBackoffQueue()
			}
		},
	})
	attachmentInf := informer.Shared[api.VolumeAttachment](s.factory, "", client.ListOptions{})
	attachmentInf.AddEventHandler(informer.Handler[api.VolumeAttachment]{
		OnDelete: func(*api.VolumeAttachment, bool) { s.Queue.MoveAllToActiveOrBackoffQueue() },
	})
	s.csiNodes = csiNodeInf.Lister()
	s.attachments = attachmentInf.Lister()
	// CSIDrivers are read, not watched: kube's plugin registers no event
	// for them.
	s.csiDrivers = informer.Shared[api.CSIDriver](s.factory, "", client.ListOptions{}).Lister()
	return volumebinding.Listers{
		Pods:    podInf.Lister(),
		Nodes:   nodeInf.Lister(),
		Claims:  claimInf.Lister(),
		Volumes: volumeInf.Lister(),
		Classes: classInf.Lister(),
	}
}

// storageHandler moves the unschedulable pods back when a claim, volume
// or class is added or changed.
func storageHandler[T any](s *Scheduler) informer.Handler[T] {
	return informer.Handler[T]{
		OnAdd:    func(*T, bool) { s.Queue.MoveAllToActiveOrBackoffQueue() },
		OnUpdate: func(_, _ *T) { s.Queue.MoveAllToActiveOrBackoffQueue() },
	}
}

// StartInformers starts the informers, feeding the queue and the cache
// until ctx ends. kube-scheduler starts them before leader election, so a
// standby has warm caches when it takes over. Run calls it when it was
// not called before.
func (s *Scheduler) StartInformers(ctx context.Context) {
	if s.started {
		return
	}
	s.started = true
	s.factory.Start(ctx)
}

// WaitForCacheSync waits for the informers' first lists; false if ctx ended.
func (s *Scheduler) WaitForCacheSync(ctx context.Context) bool {
	if !s.factory.WaitForCacheSync(ctx) {
		return false
	}
	s.synced.Store(true)
	return true
}

// WaitInformers waits for the informers to stop (after the context given to
// StartInformers ended).
func (s *Scheduler) WaitInformers() { s.factory.Wait() }

// Run schedules until ctx ends; then it stops taking pods, lets in-flight
// bindings and status updates finish, and returns. It starts the informers
// (bound to ctx) unless StartInformers was called.
func (s *Scheduler) Run(ctx context.Context) error {
	if !s.started {
		s.StartInformers(ctx)
		defer s.WaitInformers()
	}
	if !s.WaitForCacheSync(ctx) {
		return nil
	}
	s.log.Info("scheduler caches synced; scheduling", "nodes", s.Cache.NodeCount(), "scheduler", s.cfg.SchedulerName)

	var loops sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); s.Queue.Run(ctx) }()
	go func() { defer loops.Done(); s.Cache.Run(ctx, time.Second) }()
	for {
		if err := s.scheduleOne(ctx); err != nil {
			break
		}
	}
	loops.Wait()
	// Graceful stop: no new pod is taken; the binding and status goroutines
	// see ctx end and return (abandoning what they had not sent).
	s.background.Wait()
	s.log.Info("scheduler stopped", "scheduled", s.Stats.Scheduled.Load())
	return nil
}

func assigned(p *api.Pod) bool { return p.Spec.NodeName != "" }

func terminal(p *api.Pod) bool {
	return p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
}

// responsible reports whether this scheduler should schedule the pending pod.
func (s *Scheduler) responsible(p *api.Pod) bool {
	name := p.Spec.SchedulerName
	return (name == "" || name == s.cfg.SchedulerName) && p.DeletionTimestamp == nil && len(p.Spec.SchedulingGates) == 0 && !terminal(p)
}

func (s *Scheduler) onPodAdd(p *api.Pod) {
	switch {
	case assigned(p):
		if !terminal(p) {
			s.logErr(s.Cache.AddPod(p), "add pod to cache", p)
		}
	case s.responsible(p):
		s.Queue.Add(p)
		s.Nominator.AddNominatedPod(p, "")
	}
}

func (s *Scheduler) onPodUpdate(old, p *api.Pod) {
	switch {
	case assigned(p) && terminal(p):
		// A finished pod frees its node's resources.
		s.logErr(s.Cache.RemovePod(p), "remove finished pod from cache", p)
		if !terminal(old) {
			s.Queue.MoveAllToActiveOrBackoffQueue()
		}
	case assigned(p) && assigned(old):
		s.logErr(s.Cache.UpdatePod(old, p), "update pod in cache", p)
	case !assigned(p) && s.Cache.IsAssumed(p):
		// In its binding cycle (PreBind may write its nominated node):
		// neither queued nor nominated, or its resources would count
		// twice.
	case assigned(p):
		// The binding landed (ours, or another scheduler's).
		s.Queue.Delete(p)
		s.Nominator.DeleteNominatedPodIfExists(p)
		s.logErr(s.Cache.AddPod(p), "add pod to cache", p)
	case s.responsible(p):
		s.Queue.Update(old, p)
		s.Nominator.UpdateNominatedPod(old, p)
	default:
		s.Queue.Delete(p)
		s.Nominator.DeleteNominatedPodIfExists(p)
	}
}

func (s *Scheduler) onPodDelete(p *api.Pod) {
	if !assigned(p) {
		s.Queue.Delete(p)
		s.Nominator.DeleteNominatedPodIfExists(p)
		return
	}
	s.logErr(s.Cache.RemovePod(p), "remove pod from cache", p)
	s.Queue.MoveAllToActiveOrBackoffQueue()
}

// onNodeUpdate moves unschedulable pods back only for changes that can
// make a pod fit (not for heartbeats).
func (s *Scheduler) onNodeUpdate(old, n *api.Node) {
	s.Cache.UpdateNode(old, n)
	if old.Spec.Unschedulable != n.Spec.Unschedulable ||
		nodeready.IsReady(old) != nodeready.IsReady(n) ||
		!reflect.DeepEqual(old.Labels, n.Labels) ||
		!reflect.DeepEqual(old.Spec.Taints, n.Spec.Taints) ||
		!reflect.DeepEqual(old.Status.Allocatable, n.Status.Allocatable) {
		s.Queue.MoveAllToActiveOrBackoffQueue()
	}
}

func (s *Scheduler) logErr(err error, what string, p *api.Pod) {
	if err != nil {
		s.log.Error(what, "pod", p.Namespace+"/"+p.Name, "err", err)
	}
}
