package persistentvolume

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// key is one unit of work: a volume (by name) or a claim (namespace/name).
type key struct {
	volume bool
	name   string
}

// Controller is the persistentvolume-binder.
type Controller struct {
	*controller.Loop[key]
	client  *client.Client
	volumes *informer.Informer[api.PersistentVolume]
	claims  *informer.Informer[api.PersistentVolumeClaim]
	classes *informer.Informer[api.StorageClass]
	pods    *informer.Informer[api.Pod]
	events  events.Recorder
	log     *slog.Logger
	// resync is --pvclaimbinder-sync-period: every claim and volume is
	// synced again this often (a default class that appeared, a
	// provisioner that never came, a WaitForFirstConsumer claim's event).
	resync time.Duration

	// written holds the objects this controller wrote until its
	// informers show them (kube's storeVolumeUpdate/storeClaimUpdate), so
	// that the next sync starts from its own last write instead of
	// failing on a conflict with a stale cached copy.
	mu             sync.Mutex
	writtenVolumes map[string]*api.PersistentVolume
	writtenClaims  map[string]*api.PersistentVolumeClaim
}

var _ controller.Interface = (*Controller)(nil)

// New is the "persistentvolume-binder" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return controller.FromFactory("persistentvolume-binder", "persistentvolume-controller",
		func(c *client.Client, f *informer.Factory, rec events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
			ctl, err := NewController(c,
				informer.Shared[api.PersistentVolume](f, "", client.ListOptions{}),
				informer.Shared[api.PersistentVolumeClaim](f, "", client.ListOptions{}),
				informer.Shared[api.StorageClass](f, "", client.ListOptions{}),
				informer.Shared[api.Pod](f, "", client.ListOptions{}),
				rec, log, ctx.Options.PVClaimBinderSyncPeriod)
			if err != nil {
				return nil, err
			}
			ctl.SetMetrics(m)
			return ctl, nil
		})(ctx)
}

// NewController wires the controller over its informers.
func NewController(c *client.Client, volumes *informer.Informer[api.PersistentVolume], claims *informer.Informer[api.PersistentVolumeClaim],
	classes *informer.Informer[api.StorageClass], pods *informer.Informer[api.Pod], rec events.Recorder, log *slog.Logger, resync time.Duration) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	ctl := &Controller{client: c, volumes: volumes, claims: claims, classes: classes, pods: pods, events: rec, log: log, resync: resync,
		writtenVolumes: map[string]*api.PersistentVolume{}, writtenClaims: map[string]*api.PersistentVolumeClaim{}}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[key]{Queue: "volumes", Sync: ctl.sync, Log: log})
	if err := controller.AddPodClaimIndex(pods); err != nil {
		return nil, err
	}
	// A deleted claim releases its volume; a deleted volume loses its
	// claim: each sync the other, as kube's deleteClaim/deleteVolume.
	onVolume := func(v *api.PersistentVolume) { ctl.Add(key{volume: true, name: v.Name}) }
	onClaim := func(cl *api.PersistentVolumeClaim) { ctl.Add(key{name: cl.Namespace + "/" + cl.Name}) }
	controller.Watch(ctl.Loop, volumes, informer.Handler[api.PersistentVolume]{
		OnAdd:    func(v *api.PersistentVolume, _ bool) { onVolume(v) },
		OnUpdate: func(_, v *api.PersistentVolume) { onVolume(v) },
		OnDelete: func(v *api.PersistentVolume, _ bool) {
			if ref := v.Spec.ClaimRef; ref != nil {
				ctl.Add(key{name: ref.Namespace + "/" + ref.Name})
			}
		},
	})
	controller.Watch(ctl.Loop, claims, informer.Handler[api.PersistentVolumeClaim]{
		OnAdd:    func(cl *api.PersistentVolumeClaim, _ bool) { onClaim(cl) },
		OnUpdate: func(_, cl *api.PersistentVolumeClaim) { onClaim(cl) },
		OnDelete: func(cl *api.PersistentVolumeClaim, _ bool) {
			if cl.Spec.VolumeName != "" {
				ctl.Add(key{volume: true, name: cl.Spec.VolumeName})
			}
		},
	})
	ctl.WaitFor(classes, pods)
	return ctl, nil
}

// Run waits for the caches, then runs the workers and the periodic
// resync until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if !c.WaitForCaches(ctx) {
		c.Queue.ShutDown()
		return nil
	}
	c.log.Info("persistent volume controller started", "workers", workers)
	if c.resync > 0 {
		go func() {
			t := time.NewTicker(c.resync)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					c.resyncAll()
				}
			}
		}()
	}
	c.RunWorkers(ctx, workers)
	return nil
}

func (c *Controller) resyncAll() {
	for _, v := range c.volumes.Lister().List(nil) {
		c.Add(key{volume: true, name: v.Name})
	}
	for _, cl := range c.claims.Lister().List(nil) {
		c.Add(key{name: cl.Namespace + "/" + cl.Name})
	}
}

func (c *Controller) sync(ctx context.Context, k key) error {
	if k.volume {
		v := c.volume(k.name)
		if v == nil {
			return nil
		}
		return c.syncVolume(ctx, v)
	}
	cl := c.claim(k.name)
	if cl == nil {
		return nil
	}
	return c.syncClaim(ctx, cl)
}

// volume is the newest known state of the volume: the cache's, or this
// controller's last write when the cache has not shown it yet. nil when
// the cache has no such volume.
func (c *Controller) volume(name string) *api.PersistentVolume {
	cached := controller.Cached(c.volumes, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writtenVolumes[name]
	switch {
	case cached == nil:
		delete(c.writtenVolumes, name)
		return nil
	case w != nil && w.UID == cached.UID && newer(w.ResourceVersion, cached.ResourceVersion):
		return w
	default:
		delete(c.writtenVolumes, name)
		return cached
	}
}

// claim is volume's twin for claims.
func (c *Controller) claim(k string) *api.PersistentVolumeClaim {
	cached := controller.Cached(c.claims, k)
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writtenClaims[k]
	switch {
	case cached == nil:
		delete(c.writtenClaims, k)
		return nil
	case w != nil && w.UID == cached.UID && newer(w.ResourceVersion, cached.ResourceVersion):
		return w
	default:
		delete(c.writtenClaims, k)
		return cached
	}
}

func (c *Controller) wroteVolume(v *api.PersistentVolume) {
	c.mu.Lock()
	c.writtenVolumes[v.Name] = v
	c.mu.Unlock()
}

func (c *Controller) wroteClaim(cl *api.PersistentVolumeClaim) {
	c.mu.Lock()
	c.writtenClaims[cl.Namespace+"/"+cl.Name] = cl
	c.mu.Unlock()
}

// allVolumes is every volume, each in its newest known state.
func (c *Controller) allVolumes() []*api.PersistentVolume {
	cached := c.volumes.Lister().List(nil)
	out := make([]*api.PersistentVolume, 0, len(cached))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range cached {
		if w := c.writtenVolumes[v.Name]; w != nil && w.UID == v.UID && newer(w.ResourceVersion, v.ResourceVersion) {
			v = w
		}
		out = append(out, v)
	}
	return out
}

// newer reports whether resourceVersion a is past b (etcd revisions).
func newer(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}
