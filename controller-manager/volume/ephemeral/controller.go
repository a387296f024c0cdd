package ephemeral

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
	"github.com/minik8s/minik8s/internal/storagevolume"
)

// failedBinding is the reason of the event on a pod whose claim could not
// be made (kube's events.FailedBinding).
const failedBinding = "FailedBinding"

// Controller is the ephemeral volume controller.
type Controller struct {
	*controller.Loop[string]
	client *client.Client
	pods   *informer.Informer[api.Pod]
	claims *informer.Informer[api.PersistentVolumeClaim]
	rec    events.Recorder
	log    *slog.Logger
}

var _ controller.Interface = (*Controller)(nil)

// New is the "ephemeral-volume" constructor; its events come from
// "ephemeral_volume", as kube's.
func New(ctx *controller.Context) (controller.Interface, error) {
	return controller.FromFactory("ephemeral-volume", "ephemeral_volume",
		func(c *client.Client, f *informer.Factory, rec events.Recorder, log *slog.Logger, m *controller.SyncMetrics) (*Controller, error) {
			ctl, err := NewController(c, informer.Shared[api.Pod](f, "", client.ListOptions{}),
				informer.Shared[api.PersistentVolumeClaim](f, "", client.ListOptions{}), rec, log)
			if err != nil {
				return nil, err
			}
			ctl.SetMetrics(m)
			return ctl, nil
		})(ctx)
}

// NewController wires the controller over the pod and claim informers.
func NewController(c *client.Client, pods *informer.Informer[api.Pod], claims *informer.Informer[api.PersistentVolumeClaim], rec events.Recorder, log *slog.Logger) (*Controller, error) {
	if log == nil {
		log = slog.Default()
	}
	ctl := &Controller{client: c, pods: pods, claims: claims, rec: rec, log: log}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "ephemeral_volume", Sync: ctl.sync, Log: log,
		Started: "starting ephemeral volume controller"})
	if err := controller.AddPodClaimIndex(pods); err != nil {
		return nil, fmt.Errorf("could not initialize ephemeral volume controller: %w", err)
	}
	// Only new pods: a pod's volumes never change, and its claims go with
	// it through the garbage collector.
	controller.Watch(ctl.Loop, pods, informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) { ctl.enqueuePod(p) },
	})
	// A claim deleted under a live pod is made again.
	controller.Watch(ctl.Loop, claims, informer.Handler[api.PersistentVolumeClaim]{
		OnDelete: func(cl *api.PersistentVolumeClaim, _ bool) {
			for _, p := range controller.PodsUsingClaim(pods, cl.Namespace+"/"+cl.Name) {
				ctl.enqueuePod(p)
			}
		},
	})
	return ctl, nil
}

func (c *Controller) enqueuePod(p *api.Pod) {
	if p.DeletionTimestamp != nil {
		return
	}
	for i := range p.Spec.Volumes {
		if storagevolume.IsEphemeral(&p.Spec.Volumes[i]) {
			c.Add(p.Namespace + "/" + p.Name)
			return
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	pod := controller.Cached(c.pods, key)
	if pod == nil || pod.DeletionTimestamp != nil {
		return nil
	}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if err := c.handleVolume(ctx, pod, v); err != nil {
			c.rec.Event(pod, api.EventTypeWarning, failedBinding, fmt.Sprintf("ephemeral volume %s: %v", v.Name, err))
			return fmt.Errorf("pod %s, ephemeral volume %s: %w", key, v.Name, err)
		}
	}
	return nil
}

// handleVolume makes the claim of one ephemeral volume unless it exists;
// an existing claim must be the pod's.
func (c *Controller) handleVolume(ctx context.Context, pod *api.Pod, v *api.Volume) error {
	if !storagevolume.IsEphemeral(v) {
		return nil
	}
	name := storagevolume.EphemeralClaimName(pod, v)
	if pvc := controller.Cached(c.claims, pod.Namespace+"/"+name); pvc != nil {
		return storagevolume.VolumeIsForPod(pod, pvc)
	}
	tmpl, err := storagevolume.EphemeralClaimTemplate(v)
	if err != nil {
		return err
	}
	yes := true
	pvc := &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{
			Name: name,
			OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
				Controller: &yes, BlockOwnerDeletion: &yes}},
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
		},
		Spec: tmpl.Spec, // decoded afresh: not shared
	}
	if _, err := client.Resource[api.PersistentVolumeClaim](c.client).Namespace(pod.Namespace).Create(ctx, pvc); err != nil {
		// AlreadyExists too: the cache lagged, and the retry checks the
		// owner of the claim it then holds.
		return fmt.Errorf("create PVC %s: %v", name, err)
	}
	c.log.Info("created the claim of an ephemeral volume", "pod", pod.Namespace+"/"+pod.Name, "volume", v.Name, "pvc", name)
	return nil
}
