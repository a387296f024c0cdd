package pvprotection

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// Controller is the pv-protection controller.
type Controller struct {
	*controller.Loop[string]
	client  *client.Client
	volumes *informer.Informer[api.PersistentVolume]
	log     *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the "pv-protection" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return controller.FromFactory("pv-protection", "pv-protection-controller",
		func(c *client.Client, f *informer.Factory, _ events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
			ctl := NewController(c, informer.Shared[api.PersistentVolume](f, "", client.ListOptions{}), log)
			ctl.SetMetrics(m)
			return ctl, nil
		})(ctx)
}

// NewController wires the controller over the volume informer.
func NewController(c *client.Client, volumes *informer.Informer[api.PersistentVolume], log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	ctl := &Controller{client: c, volumes: volumes, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "pvprotection", Sync: ctl.sync, Log: log,
		Started: "starting PV protection controller"})
	enqueue := func(v *api.PersistentVolume) {
		if controller.NeedsFinalizer(&v.ObjectMeta, api.PVProtectionFinalizer) || controller.IsDeletionCandidate(&v.ObjectMeta, api.PVProtectionFinalizer) {
			ctl.Add(v.Name)
		}
	}
	controller.Watch(ctl.Loop, volumes, informer.Handler[api.PersistentVolume]{
		OnAdd:    func(v *api.PersistentVolume, _ bool) { enqueue(v) },
		OnUpdate: func(_, v *api.PersistentVolume) { enqueue(v) },
	})
	return ctl
}

func (c *Controller) sync(ctx context.Context, name string) error {
	v := controller.Cached(c.volumes, name)
	if v == nil {
		return nil
	}
	volumes := client.Resource[api.PersistentVolume](c.client)
	switch {
	case controller.IsDeletionCandidate(&v.ObjectMeta, api.PVProtectionFinalizer):
		if v.Status.Phase == api.VolumeBound {
			// Still in use; the phase change brings it back here.
			return nil
		}
		if err := controller.SetFinalizer(ctx, volumes, v, api.PVProtectionFinalizer, false); err != nil {
			return fmt.Errorf("remove the protection finalizer of volume %s: %w", name, err)
		}
		c.log.Info("removed the protection finalizer of an unbound volume", "pv", name)
	case controller.NeedsFinalizer(&v.ObjectMeta, api.PVProtectionFinalizer):
		if err := controller.SetFinalizer(ctx, volumes, v, api.PVProtectionFinalizer, true); err != nil {
			return fmt.Errorf("add the protection finalizer to volume %s: %w", name, err)
		}
	}
	return nil
}
