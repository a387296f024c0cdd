package pvcprotection

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// Controller is the pvc-protection controller.
type Controller struct {
	*controller.Loop[string]
	client *client.Client
	claims *informer.Informer[api.PersistentVolumeClaim]
	pods   *informer.Informer[api.Pod]
	log    *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the "pvc-protection" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	return controller.FromFactory("pvc-protection", "pvc-protection-controller",
		func(c *client.Client, f *informer.Factory, _ events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
			ctl, err := NewController(c, informer.Shared[api.PersistentVolumeClaim](f, "", client.ListOptions{}),
				informer.Shared[api.Pod](f, "", client.ListOptions{}), log)
			if err != nil {
				return nil, err
			}
			ctl.SetMetrics(m)
			return ctl, nil
		})(ctx)
}

// NewController wires the controller over the claim and pod informers.
func NewController(c *client.Client, claims *informer.Informer[api.PersistentVolumeClaim], pods *informer.Informer[api.Pod], log *slog.Logger) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	ctl := &Controller{client: c, claims: claims, pods: pods, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "pvcprotection", Sync: ctl.sync, Log: log,
		Started: "starting PVC protection controller"})
	if err := controller.AddPodClaimIndex(pods); err != nil {
		return nil, err
	}
	controller.Watch(ctl.Loop, claims, informer.Handler[api.PersistentVolumeClaim]{
		OnAdd:    func(cl *api.PersistentVolumeClaim, _ bool) { ctl.enqueueClaim(cl) },
		OnUpdate: func(_, cl *api.PersistentVolumeClaim) { ctl.enqueueClaim(cl) },
	})
	// A pod that goes away (deleted, or terminated) may free its claims.
	controller.Watch(ctl.Loop, pods, informer.Handler[api.Pod]{
		OnUpdate: func(_, p *api.Pod) {
			if controller.IsPodTerminated(p) {
				ctl.enqueuePodClaims(p)
			}
		},
		OnDelete: func(p *api.Pod, _ bool) { ctl.enqueuePodClaims(p) },
	})
	return ctl, nil
}

func (c *Controller) enqueueClaim(cl *api.PersistentVolumeClaim) {
	if controller.NeedsFinalizer(&cl.ObjectMeta, api.PVCProtectionFinalizer) || controller.IsDeletionCandidate(&cl.ObjectMeta, api.PVCProtectionFinalizer) {
		c.Add(cl.Namespace + "/" + cl.Name)
	}
}

func (c *Controller) enqueuePodClaims(p *api.Pod) {
	for _, name := range controller.PodClaimNames(p) {
		c.Add(p.Namespace + "/" + name)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	cl := controller.Cached(c.claims, key)
	if cl == nil {
		return nil
	}
	claims := client.Resource[api.PersistentVolumeClaim](c.client).Namespace(cl.Namespace)
	switch {
	case controller.IsDeletionCandidate(&cl.ObjectMeta, api.PVCProtectionFinalizer):
		used, err := c.inUse(ctx, cl)
		if err != nil || used {
			return err
		}
		if err := controller.SetFinalizer(ctx, claims, cl, api.PVCProtectionFinalizer, false); err != nil {
			return fmt.Errorf("remove the protection finalizer of claim %s: %w", key, err)
		}
		c.log.Info("removed the protection finalizer of an unused claim", "pvc", key)
	case controller.NeedsFinalizer(&cl.ObjectMeta, api.PVCProtectionFinalizer):
		if err := controller.SetFinalizer(ctx, claims, cl, api.PVCProtectionFinalizer, true); err != nil {
			return fmt.Errorf("add the protection finalizer to claim %s: %w", key, err)
		}
	}
	return nil
}

// uses reports whether the pod keeps the claim: it has not terminated and
// one of its volumes names the claim.
func uses(p *api.Pod, cl *api.PersistentVolumeClaim) bool {
	return !controller.IsPodTerminated(p) && slices.Contains(controller.PodClaimNames(p), cl.Name)
}

// inUse asks the pod cache, then the apiserver.
func (c *Controller) inUse(ctx context.Context, cl *api.PersistentVolumeClaim) (bool, error) {
	for _, p := range controller.PodsUsingClaim(c.pods, cache.MetaNamespaceKeyFunc(cl)) {
		if uses(p, cl) {
			return true, nil
		}
	}
	list, err := client.Resource[api.Pod](c.client).Namespace(cl.Namespace).List(ctx, client.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("live list of pods failed: %w", err)
	}
	for i := range list.Items {
		if uses(&list.Items[i], cl) {
			return true, nil
		}
	}
	return false, nil
}
