package vacprotection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// Name is the controller's name in --controllers, kube's (it has no
// short alias).
const Name = "volumeattributesclass-protection-controller"

// classIndex indexes volumes and claims by the classes they name.
const classIndex = "volumeAttributesClassName"

// Controller is the VolumeAttributesClass protection controller.
type Controller struct {
	*controller.Loop[string]
	client  *client.Client
	classes *informer.Informer[api.VolumeAttributesClass]
	claims  *informer.Informer[api.PersistentVolumeClaim]
	volumes *informer.Informer[api.PersistentVolume]
	log     *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the controller's constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return controller.FromFactory(Name, "volumeattributesclass-protection-controller",
		func(c *client.Client, f *informer.Factory, _ events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
			ctl, err := NewController(c, informer.Shared[api.VolumeAttributesClass](f, "", client.ListOptions{}),
				informer.Shared[api.PersistentVolumeClaim](f, "", client.ListOptions{}),
				informer.Shared[api.PersistentVolume](f, "", client.ListOptions{}), log)
			if err != nil {
				return nil, err
			}
			ctl.SetMetrics(m)
			return ctl, nil
		})(ctx)
}

// NewController wires the controller over the class, claim and volume
// informers.
func NewController(c *client.Client, classes *informer.Informer[api.VolumeAttributesClass],
	claims *informer.Informer[api.PersistentVolumeClaim], volumes *informer.Informer[api.PersistentVolume], log *slog.Logger) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	ctl := &Controller{client: c, classes: classes, claims: claims, volumes: volumes, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "vacprotection", Sync: ctl.sync, Log: log,
		Started: "starting VAC protection controller"})
	if err := controller.AddIndex(claims, classIndex, claimClasses); err != nil {
		return nil, err
	}
	if err := controller.AddIndex(volumes, classIndex, volumeClasses); err != nil {
		return nil, err
	}
	enqueue := func(v *api.VolumeAttributesClass) {
		if controller.NeedsFinalizer(&v.ObjectMeta, api.VACProtectionFinalizer) || controller.IsDeletionCandidate(&v.ObjectMeta, api.VACProtectionFinalizer) {
			ctl.Add(v.Name)
		}
	}
	controller.Watch(ctl.Loop, classes, informer.Handler[api.VolumeAttributesClass]{
		OnAdd:    func(v *api.VolumeAttributesClass, _ bool) { enqueue(v) },
		OnUpdate: func(_, v *api.VolumeAttributesClass) { enqueue(v) },
	})
	// A claim or volume that stops naming a class, or goes, may free it.
	controller.Watch(ctl.Loop, claims, informer.Handler[api.PersistentVolumeClaim]{
		OnUpdate: func(old, cur *api.PersistentVolumeClaim) { ctl.enqueueFreed(claimClasses(old), claimClasses(cur)) },
		OnDelete: func(cl *api.PersistentVolumeClaim, _ bool) { ctl.enqueueFreed(claimClasses(cl), nil) },
	})
	controller.Watch(ctl.Loop, volumes, informer.Handler[api.PersistentVolume]{
		OnUpdate: func(old, cur *api.PersistentVolume) { ctl.enqueueFreed(volumeClasses(old), volumeClasses(cur)) },
		OnDelete: func(v *api.PersistentVolume, _ bool) { ctl.enqueueFreed(volumeClasses(v), nil) },
	})
	return ctl, nil
}

// claimClasses are the classes a claim names, as kube's
// getPVCReferencedVACNames: asked for, current, and the target of a
// modification in progress.
func claimClasses(cl *api.PersistentVolumeClaim) []string {
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if n := cl.Spec.VolumeAttributesClassName; n != nil {
		add(*n)
	}
	if n := cl.Status.CurrentVolumeAttributesClassName; n != nil {
		add(*n)
	}
	if m := cl.Status.ModifyVolumeStatus; m != nil {
		add(m.TargetVolumeAttributesClassName)
	}
	return out
}

// volumeClasses is the class a volume names.
func volumeClasses(v *api.PersistentVolume) []string {
	if n := v.Spec.VolumeAttributesClassName; n != nil && *n != "" {
		return []string{*n}
	}
	return nil
}

// enqueueFreed queues the classes named before and not any more.
func (c *Controller) enqueueFreed(before, after []string) {
	for _, name := range before {
		if !slices.Contains(after, name) {
			c.Add(name)
		}
	}
}

func (c *Controller) sync(ctx context.Context, name string) error {
	v := controller.Cached(c.classes, name)
	if v == nil {
		return nil
	}
	classes := client.Resource[api.VolumeAttributesClass](c.client)
	switch {
	case controller.IsDeletionCandidate(&v.ObjectMeta, api.VACProtectionFinalizer):
		if used := c.inUse(name); used != "" {
			// Still in use; the user's change brings it back here.
			c.log.Debug("keeping a VolumeAttributesClass in use", "vac", name, "by", used)
			return nil
		}
		if err := controller.SetFinalizer(ctx, classes, v, api.VACProtectionFinalizer, false); err != nil {
			return fmt.Errorf("remove the protection finalizer of VolumeAttributesClass %s: %w", name, err)
		}
		c.log.Info("removed the protection finalizer of an unused VolumeAttributesClass", "vac", name)
	case controller.NeedsFinalizer(&v.ObjectMeta, api.VACProtectionFinalizer):
		if err := controller.SetFinalizer(ctx, classes, v, api.VACProtectionFinalizer, true); err != nil {
			return fmt.Errorf("add the protection finalizer to VolumeAttributesClass %s: %w", name, err)
		}
	}
	return nil
}

// inUse names a volume or claim in the caches that names the class, or is
// empty.
func (c *Controller) inUse(name string) string {
	if vs, _ := c.volumes.Store().ByIndex(classIndex, name); len(vs) > 0 {
		return "persistentvolume/" + vs[0].Name
	}
	if cls, _ := c.claims.Store().ByIndex(classIndex, name); len(cls) > 0 {
		return "persistentvolumeclaim/" + cls[0].Namespace + "/" + cls[0].Name
	}
	return ""
}
