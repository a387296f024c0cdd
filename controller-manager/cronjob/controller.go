package cronjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// ScheduledTimestampAnnotation is set on each Job a CronJob creates: its
// scheduled time, RFC 3339 in the CronJob's time zone.
const ScheduledTimestampAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"

// Controller runs CronJobs.
type Controller struct {
	client   *client.Client
	cronJobs *informer.Informer[api.CronJob]
	jobs     *informer.Informer[api.Job]
	*controller.Loop[string]
	recorder events.Recorder
	log      *slog.Logger
	// now is the controller's clock; tests move it.
	now func() time.Time
}

var _ controller.Interface = (*Controller)(nil)

// New is the "cronjob" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, "cronjob")
	if err != nil {
		return nil, err
	}
	c, err := NewController(ctx.Client, informer.Shared[api.CronJob](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Job](ctx.Factory, "", client.ListOptions{}), ctx.Events.RecorderFor("cronjob-controller"), ctx.Logger)
	if err != nil {
		return nil, err
	}
	c.SetMetrics(m)
	return c, nil
}

// NewController wires the controller over its informers; it indexes the
// Jobs by their controller's UID, so that a sync reads its CronJob's Jobs
// alone, not every Job of the namespace.
func NewController(c *client.Client, cronJobs *informer.Informer[api.CronJob], jobs *informer.Informer[api.Job], rec events.Recorder, log *slog.Logger) (*Controller, error) {
	if err := controller.AddControllerUIDIndex(jobs); err != nil {
		return nil, err
	}
	ctl := &Controller{client: c, cronJobs: cronJobs, jobs: jobs, recorder: rec, log: log, now: time.Now}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "cronjob", Sync: ctl.sync, Log: log})
	controller.Watch(ctl.Loop, cronJobs, informer.Handler[api.CronJob]{
		OnAdd: func(cj *api.CronJob, _ bool) { ctl.Add(controller.Key(cj)) },
		OnUpdate: func(old, cj *api.CronJob) {
			if !reflect.DeepEqual(old.Spec, cj.Spec) || old.DeletionTimestamp != cj.DeletionTimestamp {
				ctl.Add(controller.Key(cj))
			}
		},
	})
	controller.Watch(ctl.Loop, jobs, controller.OnChange(func(j *api.Job) {
		if ref := api.GetControllerOf(&j.ObjectMeta); ref != nil && ref.Kind == "CronJob" && ref.APIVersion == "batch/v1" {
			ctl.Add(j.Namespace + "/" + ref.Name)
		}
	}))
	return ctl, nil
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.cronJobs.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	cj := api.DeepCopy(cached)
	owned, _ := c.jobs.Store().ByIndex(controller.ControllerUIDIndex, string(cj.UID))
	requeue, syncErr := c.syncCronJob(ctx, cj, owned)
	if !reflect.DeepEqual(cached.Status, cj.Status) {
		if _, err := client.Resource[api.CronJob](c.client).Namespace(ns).UpdateStatus(ctx, cj); err != nil {
			return errors.Join(syncErr, fmt.Errorf("update status of cronjob %s: %w", key, err))
		}
	}
	if syncErr != nil {
		return syncErr
	}
	if err := c.cleanupFinished(ctx, cj, owned); err != nil {
		return err
	}
	if requeue > 0 {
		c.Queue.AddAfter(key, requeue)
	}
	return nil
}

// finishedCondition is the job's Complete or Failed condition type, or "".
func finishedCondition(j *api.Job) api.JobConditionType {
	for _, cond := range j.Status.Conditions {
		if (cond.Type == api.JobComplete || cond.Type == api.JobFailed) && cond.Status == api.ConditionTrue {
			return cond.Type
		}
	}
	return ""
}

func inActive(cj *api.CronJob, uid api.UID) bool {
	for _, r := range cj.Status.Active {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func removeActive(cj *api.CronJob, uid api.UID) {
	var out []api.ObjectReference
	for _, r := range cj.Status.Active {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	cj.Status.Active = out
}

// syncCronJob reconciles cj's status with its jobs and starts the job
// of the most recent unmet schedule time; it returns when to look again.
func (c *Controller) syncCronJob(ctx context.Context, cj *api.CronJob, owned []*api.Job) (time.Duration, error) {
	now := c.now()
	children := map[api.UID]bool{}
	for _, j := range owned {
		children[j.UID] = true
		cond := finishedCondition(j)
		found := inActive(cj, j.UID)
		switch {
		case !found && cond == "":
			// The cache may hold the CronJob from before the status write
			// that listed this job (created by the previous sync): read it
			// from the apiserver before calling the job unexpected, as kube.
			fresh, err := client.Resource[api.CronJob](c.client).Namespace(cj.Namespace).Get(ctx, cj.Name)
			if err != nil {
				return 0, err
			}
			if inActive(fresh, j.UID) {
				*cj = *fresh
				continue
			}
			c.recorder.Eventf(cj, api.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
		case cond != "":
			if found {
				removeActive(cj, j.UID)
				c.recorder.Eventf(cj, api.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, cond)
			}
			if cond == api.JobComplete && j.Status.CompletionTime != nil &&
				(cj.Status.LastSuccessfulTime == nil || j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time)) {
				t := *j.Status.CompletionTime
				cj.Status.LastSuccessfulTime = &t
			}
		}
	}
	jobs := client.Resource[api.Job](c.client).Namespace(cj.Namespace)
	for _, r := range cj.Status.Active {
		if children[r.UID] {
			continue
		}
		// The cache may lag behind a job just created: ask the apiserver.
		if _, err := jobs.Get(ctx, r.Name); apierrors.IsNotFound(err) {
			c.recorder.Eventf(cj, api.EventTypeNormal, "MissingJob", "Active job went missing: %v", r.Name)
			removeActive(cj, r.UID)
		} else if err != nil {
			return 0, err
		}
	}
	if cj.DeletionTimestamp != nil {
		return 0, nil
	}
	tz := ""
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
		if _, err := time.LoadLocation(tz); err != nil {
			c.recorder.Eventf(cj, api.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", tz, err)
			return 0, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return 0, nil
	}
	if tz != "" && hasTZ(cj.Spec.Schedule) {
		c.recorder.Eventf(cj, api.EventTypeWarning, "UnsupportedSchedule", "CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
		tz = ""
	}
	sched, err := ParseSchedule(cj.Spec.Schedule, tz)
	if err != nil {
		c.recorder.Eventf(cj, api.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return 0, nil
	}
	var last *time.Time
	if cj.Status.LastScheduleTime != nil {
		last = &cj.Status.LastScheduleTime.Time
	}
	created := cj.CreationTimestamp.Time
	_, scheduled, m, err := mostRecent(created, last, cj.Spec.StartingDeadlineSeconds, now, sched, true)
	if err != nil {
		c.recorder.Eventf(cj, api.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return 0, nil
	}
	if m == manyMissed {
		c.recorder.Eventf(cj, api.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	next := func() time.Duration { return requeueAfter(created, last, now, sched) }
	if scheduled == nil || scheduled.After(now) {
		return next(), nil
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		c.recorder.Eventf(cj, api.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return next(), nil
	}
	name := jobName(cj, *scheduled)
	for _, r := range cj.Status.Active {
		if r.Name == name {
			return next(), nil
		}
	}
	if last != nil && last.Equal(*scheduled) {
		return next(), nil
	}
	switch cj.Spec.ConcurrencyPolicy {
	case api.ForbidConcurrent:
		if len(cj.Status.Active) > 0 {
			c.recorder.Eventf(cj, api.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
			return next(), nil
		}
	case api.ReplaceConcurrent:
		for _, r := range append([]api.ObjectReference(nil), cj.Status.Active...) {
			if err := c.deleteJob(ctx, cj, r.Name); err != nil {
				return 0, fmt.Errorf("could not replace job %s/%s: %w", cj.Namespace, r.Name, err)
			}
			removeActive(cj, r.UID)
		}
	}
	job, err := newJob(cj, *scheduled)
	if err != nil {
		return 0, err
	}
	created2, err := jobs.Create(ctx, job)
	switch {
	case apierrors.IsAlreadyExists(err):
		existing, err := jobs.Get(ctx, name)
		if err != nil {
			return 0, err
		}
		if ref := api.GetControllerOf(&existing.ObjectMeta); ref == nil || ref.UID != cj.UID || inActive(cj, existing.UID) {
			return next(), nil
		}
		created2 = existing
	case err != nil:
		c.recorder.Eventf(cj, api.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return 0, err
	default:
		c.recorder.Eventf(cj, api.EventTypeNormal, "SuccessfulCreate", "Created job %v", created2.Name)
	}
	cj.Status.Active = append(cj.Status.Active, api.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: created2.Namespace,
		Name: created2.Name, UID: created2.UID, ResourceVersion: created2.ResourceVersion})
	st := api.NewTime(*scheduled)
	cj.Status.LastScheduleTime = &st
	last = scheduled
	return next(), nil
}

// jobName is NAME-<scheduled time in unix minutes>: the same for a given
// schedule time, so a job is never created twice for it.
func jobName(cj *api.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// newJob is the job of cj for its scheduled time.
func newJob(cj *api.CronJob, scheduled time.Time) (*api.Job, error) {
	tz := ""
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	ann := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		ann[k] = v
	}
	ann[ScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	lbls := map[string]string{}
	for k, v := range cj.Spec.JobTemplate.Labels {
		lbls[k] = v
	}
	spec := api.DeepCopy(&cj.Spec.JobTemplate.Spec)
	return &api.Job{TypeMeta: api.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: api.ObjectMeta{Namespace: cj.Namespace, Name: jobName(cj, scheduled), Labels: lbls, Annotations: ann,
			OwnerReferences: []api.OwnerReference{controller.NewControllerRef(&cj.ObjectMeta, "batch/v1", "CronJob")}},
		Spec: *spec}, nil
}

func (c *Controller) deleteJob(ctx context.Context, cj *api.CronJob, name string) error {
	bg := api.DeletePropagationBackground
	err := client.Resource[api.Job](c.client).Namespace(cj.Namespace).Delete(ctx, name, &api.DeleteOptions{PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		c.recorder.Eventf(cj, api.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		return err
	}
	c.recorder.Eventf(cj, api.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", name)
	return nil
}

// cleanupFinished deletes the oldest finished jobs beyond the history
// limits (by start time, then name).
func (c *Controller) cleanupFinished(ctx context.Context, cj *api.CronJob, owned []*api.Job) error {
	if cj.DeletionTimestamp != nil || cj.Spec.SuccessfulJobsHistoryLimit == nil && cj.Spec.FailedJobsHistoryLimit == nil {
		return nil
	}
	var succeeded, failed []*api.Job
	for _, j := range owned {
		switch finishedCondition(j) {
		case api.JobComplete:
			succeeded = append(succeeded, j)
		case api.JobFailed:
			failed = append(failed, j)
		}
	}
	var errs []error
	prune := func(jobs []*api.Job, limit *int32) {
		if limit == nil || len(jobs) <= int(*limit) {
			return
		}
		sort.Slice(jobs, func(a, b int) bool {
			sa, sb := jobs[a].Status.StartTime, jobs[b].Status.StartTime
			switch {
			case sa == nil && sb != nil:
				return false
			case sa != nil && sb == nil:
				return true
			case sa == nil || sa.Equal(sb.Time):
				return jobs[a].Name < jobs[b].Name
			}
			return sa.Before(sb.Time)
		})
		for _, j := range jobs[:len(jobs)-int(*limit)] {
			if err := c.deleteJob(ctx, cj, j.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	prune(succeeded, cj.Spec.SuccessfulJobsHistoryLimit)
	prune(failed, cj.Spec.FailedJobsHistoryLimit)
	return errors.Join(errs...)
}
