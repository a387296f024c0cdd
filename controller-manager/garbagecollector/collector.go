package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// ignored resources are never owners nor dependents worth tracking, as in
// kube's default --gc-ignored-resources.
var ignored = map[string]bool{"/events": true, "events.k8s.io/events": true}

// Collector is the garbage collector.
type Collector struct {
	client *client.Client
	log    *slog.Logger
	graph  *graph
	absent *absentCache
	// Loop's queue holds the UIDs of the objects to look at (kube's
	// attemptToDelete queue); it waits for the first monitors' caches.
	*controller.Loop[api.UID]
	informers []*informer.Informer[controller.PartialObject]

	// mu guards what discovery adds at run time: the resources monitored
	// (by "group/resource") and the kinds they serve (by
	// "apiVersion/kind"), for the custom resources CRDs define.
	mu        sync.Mutex
	monitored map[string]bool
	kinds     map[string]api.ResourceInfo
	// rediscover asks monitorNewResources to look now: an owner of a kind
	// not known yet is most often a custom resource whose CRD was created
	// since the last look.
	rediscover chan struct{}
}

var _ controller.Interface = (*Collector)(nil)

// New is the "garbagecollector" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return controller.WithSyncMetrics(NewCollector(ctx.Client, Resources(), ctx.Logger), ctx.Metrics, "garbagecollector")
}

// Resources returns the resources the collector watches: every resource of
// api.Resources but events, at its preferred version.
func Resources() []api.ResourceInfo {
	var out []api.ResourceInfo
	for _, r := range api.Resources {
		if !ignored[r.Group+"/"+r.Resource] && r.Preferred() {
			out = append(out, r)
		}
	}
	return out
}

// NewCollector makes a collector watching resources through c. Its
// metadata-only informers are its own (the shared factory holds typed
// objects); they run inside Run.
func NewCollector(c *client.Client, resources []api.ResourceInfo, log *slog.Logger) *Collector {
	gc := &Collector{
		client: c, log: log, graph: newGraph(), absent: newAbsentCache(4096),
		rediscover: make(chan struct{}, 1),
	}
	gc.Loop = controller.NewLoop(controller.LoopConfig[api.UID]{Queue: "garbage_collector_attempt_to_delete", Sync: gc.sync, Log: log})
	gc.monitored, gc.kinds = map[string]bool{}, map[string]api.ResourceInfo{}
	for _, info := range resources {
		inf := gc.monitor(info)
		gc.informers = append(gc.informers, inf)
		// Only these: a missing owner means a deleted one once they have
		// synced. Monitors discovery adds later are not waited for.
		gc.WaitFor(inf)
	}
	return gc
}

// monitor makes the metadata informer of one resource.
func (gc *Collector) monitor(info api.ResourceInfo) *informer.Informer[controller.PartialObject] {
	gc.mu.Lock()
	gc.monitored[info.Group+"/"+info.Resource] = true
	gc.kinds[info.GroupVersion()+"/"+info.Kind] = info
	gc.mu.Unlock()
	lw := informer.ForResource(client.ResourceFor[controller.PartialObject](gc.client, info), client.ListOptions{})
	inf := informer.New[controller.PartialObject](lw, informer.Options[controller.PartialObject]{Logger: gc.log})
	inf.AddEventHandler(informer.Handler[controller.PartialObject]{
		OnAdd:    func(o *controller.PartialObject, _ bool) { gc.observe(info, nil, o) },
		OnUpdate: func(old, o *controller.PartialObject) { gc.observe(info, old, o) },
		OnDelete: func(o *controller.PartialObject, _ bool) { gc.forget(o) },
	})
	return inf
}

// DiscoveryInterval is how often the collector looks for resources to
// monitor that appeared since it started (custom resources), as kube's
// garbage collector resyncs its monitors. An owner of an unknown kind makes
// it look sooner, but not more often than MinRediscoveryInterval.
var (
	DiscoveryInterval      = 10 * time.Second
	MinRediscoveryInterval = time.Second
)

// monitorNewResources starts, until ctx ends, an informer for each
// resource discovery lists that is not monitored yet and can be watched
// and deleted. A CRD's deletion ends its resource's watches; the informer
// keeps retrying, harmlessly, until the resource comes back.
func (gc *Collector) monitorNewResources(ctx context.Context) {
	ticker := time.NewTicker(DiscoveryInterval)
	defer ticker.Stop()
	for {
		last := time.Now()
		found, err := gc.client.GroupResources(ctx)
		if err != nil && ctx.Err() == nil {
			gc.log.Warn("discovery failed; monitors not updated", "err", err)
		}
		for _, r := range found {
			key := r.Info.Group + "/" + r.Info.Resource
			gc.mu.Lock()
			known := gc.monitored[key]
			gc.mu.Unlock()
			if known || ignored[key] || !slices.Contains(r.Verbs, "watch") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			inf := gc.monitor(r.Info)
			gc.log.Info("monitoring a new resource", "group", r.Info.Group, "resource", r.Info.Resource)
			go inf.Run(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-gc.rediscover:
			// A CRD created a moment ago: without this, an owner
			// created and deleted before the next tick would leave its
			// dependents waiting out the queue's back-off (minutes).
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(last.Add(MinRediscoveryInterval))):
			}
		}
	}
}

// kindInfo finds the resource of an owner's apiVersion and kind: a
// built-in one, or one discovery found.
func (gc *Collector) kindInfo(apiVersion, kind string) (api.ResourceInfo, bool) {
	if info, ok := api.LookupKind(apiVersion, kind); ok {
		return info, true
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	info, ok := gc.kinds[apiVersion+"/"+kind]
	return info, ok
}

// observe records an added or updated object and queues what it may
// affect: the object itself when its owners or deletion state changed, its
// dependents when its deletion state changed, and owners it dropped.
func (gc *Collector) observe(info api.ResourceInfo, oldObj, obj *controller.PartialObject) {
	n := newNode(info, &obj.ObjectMeta)
	old := gc.graph.upsert(n)
	if old == nil || oldObj == nil {
		gc.Add(n.uid)
		if n.deleting {
			gc.enqueueDependents(n.uid)
		}
		return
	}
	deletionChanged := old.deleting != n.deleting || !slices.Equal(old.finalizers, n.finalizers)
	if deletionChanged || !slices.Equal(old.owners, n.owners) {
		gc.Add(n.uid)
	}
	if deletionChanged {
		gc.enqueueDependents(n.uid)
	}
	for _, ref := range old.owners {
		// A foreground owner may have been waiting for it: it is gone
		// from the references, or no longer blocks.
		if nr := n.ownerRef(ref.UID); nr == nil || blocks(ref) && !blocks(*nr) {
			gc.Add(ref.UID)
		}
	}
}

// blocks: the reference holds its owner's foreground deletion.
func blocks(ref api.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

// forget drops a deleted object: its owners may be waiting for it, and its
// dependents may have lost their last owner.
func (gc *Collector) forget(obj *controller.PartialObject) {
	n := gc.graph.remove(obj.UID)
	if n == nil {
		return
	}
	gc.absent.add(n.uid)
	for _, ref := range n.owners {
		gc.Add(ref.UID)
	}
	gc.enqueueDependents(n.uid)
}

func (gc *Collector) enqueueDependents(uid api.UID) {
	for _, d := range gc.graph.dependentUIDs(uid) {
		gc.Add(d)
	}
}

// Run starts the metadata informers, waits until all have synced (so that
// a missing owner means a deleted one), and collects until ctx ends.
func (gc *Collector) Run(ctx context.Context, workers int) error {
	if !gc.startInformers(ctx) {
		return nil
	}
	gc.log.Info("garbage collector synced", "resources", len(gc.informers))
	go gc.monitorNewResources(ctx)
	gc.RunWorkers(ctx, workers)
	return nil
}

// startInformers runs the informers until ctx ends (they are the
// collector's own, not the shared factory's) and waits for their first
// lists; false if ctx ended first.
func (gc *Collector) startInformers(ctx context.Context) bool {
	for _, inf := range gc.informers {
		go inf.Run(ctx)
	}
	return gc.WaitForCaches(ctx)
}

// sync processes one object: an owner being deleted with the orphan or
// foregroundDeletion finalizer has its dependents handled; any other object
// with owners is deleted when none of them remains.
func (gc *Collector) sync(ctx context.Context, uid api.UID) error {
	n := gc.graph.get(uid)
	if n == nil {
		return nil
	}
	if n.deleting {
		switch {
		case n.hasFinalizer(api.FinalizerOrphanDependents):
			return gc.orphanDependents(ctx, n)
		case n.hasFinalizer(api.FinalizerDeleteDependents):
			return gc.processDeletingDependents(ctx, n)
		}
		return nil
	}
	if len(n.owners) == 0 {
		return nil
	}
	return gc.attemptToDelete(ctx, n)
}

// ownerState classifies an owner reference as kube's classifyReferences.
type ownerState int

const (
	solid    ownerState = iota // exists
	dangling                   // gone (or a different object now has the name)
	waiting                    // exists, deleting its dependents in the foreground
)

func (gc *Collector) classify(ctx context.Context, n *node, ref api.OwnerReference) (ownerState, error) {
	if o := gc.graph.get(ref.UID); o != nil {
		if o.info.Namespaced && o.namespace != n.namespace {
			return dangling, nil // a namespaced owner must share the dependent's namespace
		}
		if o.deletingDependents() {
			return waiting, nil
		}
		return solid, nil
	}
	if gc.absent.has(ref.UID) {
		return dangling, nil
	}
	// Not observed (yet): ask the apiserver, as kube does for virtual nodes.
	info, ok := gc.kindInfo(ref.APIVersion, ref.Kind)
	if !ok {
		select {
		case gc.rediscover <- struct{}{}:
		default:
		}
		return solid, fmt.Errorf("owner %s %s of %s/%s: unknown kind", ref.APIVersion, ref.Kind, n.namespace, n.name)
	}
	d := gc.client.Dynamic(info)
	if info.Namespaced {
		d = d.Namespace(n.namespace)
	}
	u, err := d.Get(ctx, ref.Name)
	if apierrors.IsNotFound(err) {
		gc.absent.add(ref.UID)
		return dangling, nil
	}
	if err != nil {
		return solid, err
	}
	m, err := metaOf(u)
	if err != nil {
		return solid, err
	}
	if m.UID != ref.UID {
		gc.absent.add(ref.UID)
		return dangling, nil
	}
	if m.DeletionTimestamp != nil && slices.Contains(m.Finalizers, api.FinalizerDeleteDependents) {
		return waiting, nil
	}
	return solid, nil
}

// attemptToDelete is kube's attemptToDeleteItem.
func (gc *Collector) attemptToDelete(ctx context.Context, n *node) error {
	var solidRefs, goneRefs, waitingRefs []api.UID
	for _, ref := range n.owners {
		st, err := gc.classify(ctx, n, ref)
		if err != nil {
			return err
		}
		switch st {
		case solid:
			solidRefs = append(solidRefs, ref.UID)
		case dangling:
			goneRefs = append(goneRefs, ref.UID)
		case waiting:
			waitingRefs = append(waitingRefs, ref.UID)
		}
	}
	switch {
	case len(solidRefs) > 0:
		if len(goneRefs)+len(waitingRefs) == 0 {
			return nil
		}
		// Another owner keeps it alive: just drop the references to the
		// owners that are gone or going.
		return gc.removeOwnerRefs(ctx, n, append(goneRefs, waitingRefs...))
	case len(waitingRefs) > 0 && len(gc.graph.dependentUIDs(n.uid)) > 0:
		// An owner deletes in the foreground and this object has dependents
		// of its own: delete it in the foreground too, so the whole tree
		// goes bottom-up. When one of its dependents is itself deleting
		// its dependents, the owners may form a cycle, each waiting for
		// the next: as kube, its references stop blocking its owners
		// first, which breaks the cycle.
		for _, d := range gc.graph.dependentsOf(n.uid) {
			if d.deletingDependents() {
				if err := gc.unblockOwnerRefs(ctx, n); err != nil {
					return err
				}
				break
			}
		}
		return gc.deleteObject(ctx, n, api.DeletePropagationForeground)
	default:
		policy := api.DeletePropagationBackground
		switch {
		case n.hasFinalizer(api.FinalizerOrphanDependents):
			policy = api.DeletePropagationOrphan
		case n.hasFinalizer(api.FinalizerDeleteDependents):
			policy = api.DeletePropagationForeground
		}
		return gc.deleteObject(ctx, n, policy)
	}
}

// processDeletingDependents handles an owner in foreground deletion: its
// dependents are queued for deletion, and once no dependent blocking the
// owner's deletion is left the foregroundDeletion finalizer is removed.
func (gc *Collector) processDeletingDependents(ctx context.Context, n *node) error {
	blocking := 0
	for _, d := range gc.graph.dependentsOf(n.uid) {
		ref := d.ownerRef(n.uid)
		if ref != nil && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			blocking++
		}
		if !d.deleting {
			gc.Add(d.uid)
		}
	}
	if blocking > 0 {
		return nil // the deletion of each blocking dependent queues the owner again
	}
	return gc.removeFinalizer(ctx, n, api.FinalizerDeleteDependents)
}

// orphanDependents strips the owner's references from its dependents and
// then removes the orphan finalizer.
func (gc *Collector) orphanDependents(ctx context.Context, n *node) error {
	for _, d := range gc.graph.dependentsOf(n.uid) {
		if err := gc.removeOwnerRefs(ctx, d, []api.UID{n.uid}); err != nil {
			return fmt.Errorf("orphan %s %s/%s: %w", d.info.Kind, d.namespace, d.name, err)
		}
	}
	return gc.removeFinalizer(ctx, n, api.FinalizerOrphanDependents)
}

func (gc *Collector) dynamic(n *node) *client.DynamicClient {
	d := gc.client.Dynamic(n.info)
	if n.info.Namespaced {
		d = d.Namespace(n.namespace)
	}
	return d
}

func (gc *Collector) deleteObject(ctx context.Context, n *node, policy api.DeletionPropagation) error {
	uid := n.uid
	err := gc.dynamic(n).Delete(ctx, n.name, &api.DeleteOptions{
		PropagationPolicy: &policy,
		Preconditions:     &api.Preconditions{UID: &uid},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another object of that name
	}
	if err != nil {
		return fmt.Errorf("delete %s %s/%s: %w", n.info.Kind, n.namespace, n.name, err)
	}
	gc.log.Info("deleted object whose owners are gone", "kind", n.info.Kind, "namespace", n.namespace, "name", n.name, "propagation", policy)
	return nil
}

// mutate reads the live object, applies f to its metadata and writes it
// back with the read resourceVersion; a conflict returns an error, so the
// item is retried against the new state.
func (gc *Collector) mutate(ctx context.Context, n *node, f func(m map[string]any) bool) error {
	d := gc.dynamic(n)
	u, err := d.Get(ctx, n.name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	if meta == nil || fmt.Sprint(meta["uid"]) != string(n.uid) {
		return nil
	}
	if !f(meta) {
		return nil
	}
	_, err = d.Update(ctx, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (gc *Collector) removeOwnerRefs(ctx context.Context, n *node, uids []api.UID) error {
	return gc.mutate(ctx, n, func(m map[string]any) bool {
		refs, _ := m["ownerReferences"].([]any)
		var keep []any
		for _, r := range refs {
			rm, _ := r.(map[string]any)
			if rm != nil && slices.Contains(uids, api.UID(fmt.Sprint(rm["uid"]))) {
				continue
			}
			keep = append(keep, r)
		}
		if len(keep) == len(refs) {
			return false
		}
		if len(keep) == 0 {
			delete(m, "ownerReferences")
		} else {
			m["ownerReferences"] = keep
		}
		return true
	})
}

// unblockOwnerRefs sets blockOwnerDeletion false on every reference of n
// that blocks its owner, as kube's unblockOwnerReferences.
func (gc *Collector) unblockOwnerRefs(ctx context.Context, n *node) error {
	return gc.mutate(ctx, n, func(m map[string]any) bool {
		refs, _ := m["ownerReferences"].([]any)
		changed := false
		for _, r := range refs {
			if rm, _ := r.(map[string]any); rm != nil && rm["blockOwnerDeletion"] == true {
				rm["blockOwnerDeletion"] = false
				changed = true
			}
		}
		return changed
	})
}

func (gc *Collector) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	err := gc.mutate(ctx, n, func(m map[string]any) bool {
		fs, _ := m["finalizers"].([]any)
		var keep []any
		for _, f := range fs {
			if f != finalizer {
				keep = append(keep, f)
			}
		}
		if len(keep) == len(fs) {
			return false
		}
		if len(keep) == 0 {
			delete(m, "finalizers")
		} else {
			m["finalizers"] = keep
		}
		return true
	})
	if err == nil {
		gc.log.Info("removed finalizer", "finalizer", finalizer, "kind", n.info.Kind, "namespace", n.namespace, "name", n.name)
	}
	return err
}

func metaOf(u *client.Unstructured) (*api.ObjectMeta, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	var m controller.PartialObject
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m.ObjectMeta, nil
}
