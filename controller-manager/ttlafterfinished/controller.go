package ttlafterfinished

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/informer"
)

// Controller deletes finished Jobs whose TTL has run out.
type Controller struct {
	client *client.Client
	jobs   *informer.Informer[api.Job]
	*controller.Loop[string]
	log *slog.Logger
	now func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the "ttl-after-finished" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	c := NewController(ctx.Client, informer.Shared[api.Job](ctx.Factory, "", client.ListOptions{}), ctx.Logger)
	return controller.WithSyncMetrics(c, ctx.Metrics, "ttl_after_finished")
}

// NewController wires the controller over the Job informer.
func NewController(c *client.Client, jobs *informer.Informer[api.Job], log *slog.Logger) *Controller {
	ctl := &Controller{client: c, jobs: jobs, log: log, now: time.Now}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "ttl_jobs_to_delete", Sync: ctl.sync, Log: log})
	enqueue := func(j *api.Job) {
		if j.DeletionTimestamp == nil && j.Spec.TTLSecondsAfterFinished != nil && finishedAt(j) != nil {
			ctl.Add(controller.Key(j))
		}
	}
	controller.Watch(ctl.Loop, jobs, informer.Handler[api.Job]{
		OnAdd:    func(j *api.Job, _ bool) { enqueue(j) },
		OnUpdate: func(_, j *api.Job) { enqueue(j) },
	})
	return ctl
}

// finishedAt is when the job finished: the transition of its Complete or
// Failed condition; nil while it runs.
func finishedAt(j *api.Job) *time.Time {
	for _, c := range j.Status.Conditions {
		if (c.Type == api.JobComplete || c.Type == api.JobFailed) && c.Status == api.ConditionTrue {
			t := c.LastTransitionTime.Time
			return &t
		}
	}
	return nil
}

// expiresIn is how long until j's TTL runs out (<= 0: now), and whether j
// is subject to it at all.
func (c *Controller) expiresIn(j *api.Job) (time.Duration, bool) {
	if j.DeletionTimestamp != nil || j.Spec.TTLSecondsAfterFinished == nil {
		return 0, false
	}
	at := finishedAt(j)
	if at == nil {
		return 0, false
	}
	return at.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second).Sub(c.now()), true
}

func (c *Controller) sync(ctx context.Context, key string) error {
	cached := controller.Cached(c.jobs, key)
	if cached == nil {
		return nil
	}
	if left, ok := c.expiresIn(cached); !ok {
		return nil
	} else if left > 0 {
		c.Queue.AddAfter(key, left)
		return nil
	}
	// The cache may be stale (the TTL changed, the job was recreated):
	// re-read it from the apiserver before deleting, as kube does.
	name := cached.Name
	jobs := client.Resource[api.Job](c.client).Namespace(cached.Namespace)
	fresh, err := jobs.Get(ctx, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if left, ok := c.expiresIn(fresh); !ok {
		return nil
	} else if left > 0 {
		c.Queue.AddAfter(key, left)
		return nil
	}
	fg := api.DeletePropagationForeground
	uid := fresh.UID
	err = jobs.Delete(ctx, name, &api.DeleteOptions{PropagationPolicy: &fg, Preconditions: &api.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete job %s: %w", key, err)
	}
	c.log.Info("cleaning up finished job", "job", key)
	return nil
}
