package job

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// JobControllerName is the spec.managedBy of the jobs this controller
// runs (as the field's absence).
const JobControllerName = "kubernetes.io/job-controller"

// Kube's pod re-creation back-off after failures: 10 s doubling to 6 min.
const (
	DefaultBackoff = 10 * time.Second
	MaxBackoff     = 6 * time.Minute
)

// Controller runs Jobs.
type Controller struct {
	client       *client.Client
	jobs         *informer.Informer[api.Job]
	pods         *informer.Informer[api.Pod]
	podControl   controller.PodControl
	expectations *controller.Expectations
	// finalizers are the tracking-finalizer removals not yet seen.
	finalizers finalizerExpectations
	// written is the resourceVersion of each job's last status write.
	written writtenVersions
	*controller.Loop[string]
	recorder events.Recorder
	log      *slog.Logger
	now      func() time.Time
	// Backoff is the delay before replacing the first failed pod; it
	// doubles with each further failure up to MaxBackoff.
	Backoff time.Duration
}

var _ controller.Interface = (*Controller)(nil)

// New is the "job" constructor.
func New(ctx *controller.Context) (controller.Interface, error) {
	m, err := controller.NewSyncMetrics(ctx.Metrics, "job")
	if err != nil {
		return nil, err
	}
	rec := ctx.Events.RecorderFor("job-controller")
	c := NewController(ctx.Client, informer.Shared[api.Job](ctx.Factory, "", client.ListOptions{}),
		informer.Shared[api.Pod](ctx.Factory, "", client.ListOptions{}),
		controller.RealPodControl{Client: ctx.Client, Recorder: rec}, rec, ctx.Logger)
	c.SetMetrics(m)
	return c, nil
}

// NewController wires the controller over its informers.
func NewController(c *client.Client, jobs *informer.Informer[api.Job], pods *informer.Informer[api.Pod], pc controller.PodControl, rec events.Recorder, log *slog.Logger) *Controller {
	ctl := &Controller{
		client: c, jobs: jobs, pods: pods, podControl: pc, recorder: rec, log: log,
		expectations: controller.NewExpectations(),
		now:          time.Now,
		Backoff:      DefaultBackoff,
	}
	ctl.Loop = controller.NewLoop(controller.LoopConfig[string]{Queue: "job", Sync: ctl.sync, Log: log})
	jobsKeys := controller.QueueKeys[api.Job](ctl.Loop)
	// A deleted job's key is not queued, only what the controller
	// remembers of it dropped: an event of one of its pods queues it, and
	// that sync, finding it gone, frees the pods.
	jobsKeys.OnDelete = func(j *api.Job, _ bool) {
		key := controller.Key(j)
		ctl.expectations.Delete(key)
		ctl.finalizers.delete(key)
		ctl.written.forget(key)
	}
	controller.Watch(ctl.Loop, jobs, jobsKeys)
	controller.Watch(ctl.Loop, pods, informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) {
			if key := ctl.jobKeyOf(p); key != "" {
				if p.DeletionTimestamp != nil {
					ctl.expectations.DeletionObserved(key, controller.PodKey(p))
				} else {
					ctl.expectations.CreationObserved(key)
				}
				ctl.Add(key)
				return
			}
			ctl.enqueueSelecting(p)
		},
		OnUpdate: func(old, p *api.Pod) {
			if old.ResourceVersion == p.ResourceVersion {
				return
			}
			key := ctl.jobKeyOf(p)
			if key != "" {
				if p.DeletionTimestamp != nil && old.DeletionTimestamp == nil {
					ctl.expectations.DeletionObserved(key, controller.PodKey(p))
				}
				if !hasTrackingFinalizer(p) {
					ctl.finalizers.observed(key, p.UID)
				}
				ctl.Add(key)
			}
			if oldKey := ctl.jobKeyOf(old); oldKey != "" && oldKey != key {
				ctl.finalizers.observed(oldKey, p.UID)
				ctl.Add(oldKey)
			}
			if key == "" {
				ctl.enqueueSelecting(p)
			}
		},
		OnDelete: func(p *api.Pod, _ bool) {
			if key := ctl.jobKeyOf(p); key != "" {
				ctl.expectations.DeletionObserved(key, controller.PodKey(p))
				ctl.finalizers.observed(key, p.UID)
				ctl.Add(key)
			}
		},
	})
	return ctl
}

// jobKeyOf returns the key of the Job controlling pod, or "".
func (c *Controller) jobKeyOf(p *api.Pod) string {
	ref := api.GetControllerOf(&p.ObjectMeta)
	if ref == nil || ref.Kind != "Job" || ref.APIVersion != "batch/v1" {
		return ""
	}
	return p.Namespace + "/" + ref.Name
}

func isFinished(j *api.Job) bool {
	for _, cond := range j.Status.Conditions {
		if (cond.Type == api.JobComplete || cond.Type == api.JobFailed) && cond.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

// podsOf returns the job's pods: those it controls that match its selector.
func (c *Controller) podsOf(j *api.Job) ([]*api.Pod, error) {
	sel, err := labels.SelectorFromLabelSelector(j.Spec.Selector)
	if err != nil {
		return nil, err
	}
	var out []*api.Pod
	for _, p := range c.pods.Lister().Namespace(j.Namespace).List(sel) {
		if ref := api.GetControllerOf(&p.ObjectMeta); ref != nil && ref.UID == j.UID {
			out = append(out, p)
		}
	}
	sortByName(out)
	return out, nil
}

// claimPods is kube's getPodsForJob: the job's pods after it adopted the
// orphans its selector matches (with its tracking finalizer, checking first
// with a fresh read that the job is not being deleted) and released those
// it controls that no longer match (finalizer removed).
func (c *Controller) claimPods(ctx context.Context, j *api.Job) ([]*api.Pod, error) {
	sel, err := labels.SelectorFromLabelSelector(j.Spec.Selector)
	if err != nil {
		return nil, err
	}
	canAdopt := controller.RecheckDeletionOf[api.Job](c.client, &j.ObjectMeta)
	claimed, err := controller.NewRefManager[api.Pod](c.client, &j.ObjectMeta, "batch/v1", "Job", sel, canAdopt).
		WithFinalizers(api.JobTrackingFinalizer).Claim(ctx, c.pods.Lister().Namespace(j.Namespace).List(nil))
	// An adopted pod carries the finalizer now, not yet in the cache.
	for i, p := range claimed {
		if ref := api.GetControllerOf(&p.ObjectMeta); (ref == nil || ref.UID != j.UID) && !hasTrackingFinalizer(p) {
			cp := api.DeepCopy(p)
			cp.Finalizers = append(cp.Finalizers, api.JobTrackingFinalizer)
			claimed[i] = cp
		}
	}
	sortByName(claimed)
	return claimed, err
}

// sortByName orders pods by name: what is written does not depend on the
// lister's order.
func sortByName(pods []*api.Pod) {
	slices.SortFunc(pods, func(a, b *api.Pod) int { return strings.Compare(a.Name, b.Name) })
}

func jobSelector(j *api.Job) *api.LabelSelector { return j.Spec.Selector }

// enqueueSelecting queues the Jobs of p's namespace whose selector matches
// the orphan p: one of them may adopt it (kube's getPodJobs).
func (c *Controller) enqueueSelecting(p *api.Pod) {
	if p.DeletionTimestamp != nil || api.GetControllerOf(&p.ObjectMeta) != nil {
		return
	}
	for _, j := range controller.Selecting(c.jobs.Lister().Namespace(p.Namespace), jobSelector, p.Labels) {
		c.Add(controller.Key(j))
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.jobs.Lister().Namespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Delete(key)
		c.finalizers.delete(key)
		c.written.forget(key)
		return c.releaseOrphans(ctx, ns, name, "")
	}
	if err != nil {
		return err
	}
	// A cache older than this controller's own last write would count
	// anew what that write counted (kube's StaleControllerConsistencyJob,
	// on in v1.37): the write's event brings the job back.
	if !c.written.seen(key, cached.ResourceVersion) {
		return nil
	}
	// A job managed by another controller is not this one's (JobManagedBy,
	// GA and locked on in v1.37).
	if m := cached.Spec.ManagedBy; m != nil && *m != JobControllerName {
		c.log.Debug("job managed by another controller", "job", key, "managedBy", *m)
		return nil
	}
	// A finished or deleted job counts nothing more: its pods go free.
	if isFinished(cached) || cached.DeletionTimestamp != nil {
		pods, err := c.podsOf(cached)
		if err != nil {
			return fmt.Errorf("job %s: selector: %w", key, err)
		}
		_, err = c.releasePods(ctx, "", pods)
		return errors.Join(err, c.releaseOrphans(ctx, ns, name, cached.UID))
	}
	pods, err := c.claimPods(ctx, cached)
	if err != nil {
		return fmt.Errorf("job %s: claim pods: %w", key, err)
	}
	if !c.expectations.Satisfied(key) {
		return nil
	}
	job := api.DeepCopy(cached)
	now := c.now()
	st := &job.Status
	indexed := job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == api.IndexedCompletion && job.Spec.Completions != nil
	perIndex := indexed && job.Spec.BackoffLimitPerIndex != nil

	// Uncounted pods whose finalizer is gone are counted now; a pod whose
	// finalizer this controller removed counts as released before its
	// informer shows it.
	released := c.finalizers.expected(key)
	holding := map[api.UID]bool{}
	for _, p := range pods {
		if hasTrackingFinalizer(p) && !released[p.UID] {
			holding[p.UID] = true
		}
	}
	unc := newUncounted(st)
	unc.count(st, holding)

	var done, failedIdx, prevDone map[int]bool
	var completions int32
	if indexed {
		completions = *job.Spec.Completions
		done = parseIndexes(st.CompletedIndexes, completions)
		prevDone = maps.Clone(done)
		failedIdx = map[int]bool{}
		if st.FailedIndexes != nil {
			failedIdx = parseIndexes(*st.FailedIndexes, completions)
		}
	}
	failing := conditionOf(st, api.JobFailureTarget) != nil
	var active []*api.Pod
	// terminating are kube's: pods being deleted that have not finished;
	// the terminal condition waits for them.
	var ready, terminating, held int32
	var lastFailure time.Time
	policyFailure := ""
	for _, p := range pods {
		if p.DeletionTimestamp != nil && p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed {
			terminating++
		}
		ix := -1
		if indexed {
			ix = podIndex(p, completions)
		}
		switch {
		case p.Status.Phase == api.PodSucceeded:
			if indexed && ix >= 0 && !failedIdx[ix] {
				done[ix] = true
			}
		case isPodFailed(p, job, failing):
			action, msg := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
			if action == api.PodFailurePolicyActionIgnore {
				// Ignored failures count neither as failures nor
				// toward the job's back-off.
				continue
			}
			lastFailure = latest(lastFailure, finishTime(p))
			if !holding[p.UID] || indexed && ix < 0 {
				continue // counted before
			}
			switch {
			case action == api.PodFailurePolicyActionFailJob && policyFailure == "":
				policyFailure = msg
			case perIndex && (action == api.PodFailurePolicyActionFailIndex || indexFailureCount(p) >= *job.Spec.BackoffLimitPerIndex):
				if !done[ix] {
					failedIdx[ix] = true
				}
			}
		case p.DeletionTimestamp != nil:
			// Terminating, not (yet) failed: the job replaces only
			// Failed pods, so this one still takes its place.
			held++
		default:
			active = append(active, p)
			if controller.IsPodReady(p) {
				ready++
			}
		}
	}

	var errs []error
	// pending are the indexes of an Indexed job still to run, lowest
	// first; an active pod without a valid index, or with the index of
	// another active pod, or of an index already succeeded or failed, goes.
	var pending []int
	// delayed holds, per index waiting for a new pod, the failed pod that
	// keeps its finalizer until that pod exists (kube's
	// podsWithDelayedDeletionPerIndex): the index's failure count lives in
	// its annotations, so deleting it must not lose the count.
	delayed := map[int]*api.Pod{}
	if indexed {
		running := map[int]bool{}
		var keep, extra []*api.Pod
		// Of two active pods with one index, the older stays (then the
		// first by name): the choice must not depend on the lister's order.
		slices.SortStableFunc(active, func(a, b *api.Pod) int {
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		for _, p := range active {
			i := podIndex(p, completions)
			if i < 0 || running[i] || done[i] || failedIdx[i] {
				extra = append(extra, p)
				continue
			}
			running[i] = true
			keep = append(keep, p)
		}
		deleted, delErrs := c.deletePods(ctx, job, key, extra, true)
		errs = append(errs, delErrs...)
		terminating += deleted
		active = keep
		for i := range int(completions) {
			if !done[i] && !running[i] && !failedIdx[i] {
				pending = append(pending, i)
			}
		}
		if perIndex {
			for _, p := range pods {
				ix := podIndex(p, completions)
				if !holding[p.UID] || ix < 0 || done[ix] || failedIdx[ix] || running[ix] || !isPodFailed(p, job, failing) {
					continue
				}
				// The one with the most failures before it, the latest.
				if d, ok := delayed[ix]; !ok || absoluteIndexFailures(d) <= absoluteIndexFailures(p) && !finishTime(p).Before(finishTime(d)) {
					delayed[ix] = p
				}
			}
		}
	}
	succeeded := st.Succeeded + int32(len(unc.succeeded))
	if indexed {
		succeeded = int32(len(done))
	} else {
		for _, p := range pods {
			if p.Status.Phase == api.PodSucceeded && holding[p.UID] && !unc.has(p.UID) {
				succeeded++
			}
		}
	}
	failed := st.Failed + int32(len(unc.failed))
	for _, p := range pods {
		if holding[p.UID] && !unc.has(p.UID) && p.Status.Phase != api.PodSucceeded && isPodFailed(p, job, failing) &&
			(!indexed || podIndex(p, completions) >= 0) {
			if action, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); action != api.PodFailurePolicyActionIgnore {
				failed++
			}
		}
	}
	suspended := job.Spec.Suspend != nil && *job.Spec.Suspend
	if st.StartTime == nil && !suspended {
		t := api.NewTime(now)
		st.StartTime = &t
	}
	backoffLimit := int32(6)
	if job.Spec.BackoffLimit != nil {
		backoffLimit = *job.Spec.BackoffLimit
	}
	var requeue time.Duration
	failReason, failMessage := "", ""
	target := conditionOf(st, api.JobFailureTarget)
	switch {
	case conditionOf(st, api.JobSuccessCriteriaMet) != nil:
		// Success was decided by an earlier sync: no failure overrides it.
	case target != nil:
		// Decided by an earlier sync, waiting for its pods.
		failReason, failMessage = target.Reason, target.Message
	case policyFailure != "":
		failReason, failMessage = api.JobReasonPodFailurePolicy, policyFailure
	case failed > backoffLimit || pastBackoffLimitOnFailure(job, active, backoffLimit):
		failReason, failMessage = api.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"
	case job.Spec.ActiveDeadlineSeconds != nil && st.StartTime != nil && !suspended:
		deadline := st.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
		if !now.Before(deadline) {
			failReason, failMessage = api.JobReasonDeadlineExceeded, "Job was active longer than specified deadline"
		} else {
			requeue = deadline.Sub(now)
		}
	}
	if failReason == "" && target == nil && perIndex && conditionOf(st, api.JobSuccessCriteriaMet) == nil {
		switch {
		case job.Spec.MaxFailedIndexes != nil && int32(len(failedIdx)) > *job.Spec.MaxFailedIndexes:
			failReason, failMessage = api.JobReasonMaxFailedIndexesExceeded, "Job has exceeded the specified maximal number of failed indexes"
		case len(failedIdx) > 0 && len(done)+len(failedIdx) >= int(completions):
			failReason, failMessage = api.JobReasonFailedIndexes, "Job has failed indexes"
		}
	}

	// Success: decided by an earlier sync (its reason stays), or a rule
	// of the success policy met now, checked after every failure as in
	// kube, or the completions reached.
	successReason, successMessage := api.JobReasonCompletionsReached, "Reached expected number of succeeded pods"
	policyMet := false
	if met := conditionOf(st, api.JobSuccessCriteriaMet); met != nil {
		successReason, successMessage = met.Reason, met.Message
	} else if indexed && failReason == "" {
		if msg, ok := matchSuccessPolicy(job.Spec.SuccessPolicy, completions, done); ok {
			successReason, successMessage, policyMet = api.JobReasonSuccessPolicy, msg, true
		}
	}
	activeCount := int32(len(active))
	complete := failReason == "" && (conditionOf(st, api.JobSuccessCriteriaMet) != nil || policyMet ||
		(job.Spec.Completions != nil && succeeded >= *job.Spec.Completions) ||
		(job.Spec.Completions == nil && succeeded > 0 && len(active) == 0))
	// finishing: the job met its success criteria or failed; its active
	// pods are stopped and every pod it holds is released.
	finishing := false
	if failReason != "" || complete {
		deleted, delErrs := c.deletePods(ctx, job, key, active, false)
		errs = append(errs, delErrs...)
		terminating += deleted
		activeCount -= deleted
		for _, p := range active {
			if controller.IsPodReady(p) {
				ready--
			}
		}
		// As kube's: a pod that could not be deleted keeps the job from
		// finishing in this sync.
		finishing = len(delErrs) == 0
	} else {
		var wait time.Duration
		var removed int32
		var manageErrs []error
		activeCount, removed, wait, manageErrs = c.manageJob(ctx, job, key, active, held, pending, delayed, succeeded, failed, lastFailure, suspended, now)
		errs = append(errs, manageErrs...)
		terminating += removed
		if wait > 0 && (requeue == 0 || wait < requeue) {
			requeue = wait
		}
		// As kube's (MutableSchedulingDirectivesForSuspendedJobs, on by
		// default in v1.37): a suspended job has no start time; a resumed
		// one starts again now, so activeDeadlineSeconds counts only
		// the time it runs.
		switch {
		case suspended && setCondition(st, api.JobSuspended, api.ConditionTrue, "JobSuspended", "Job suspended", now):
			c.recorder.Event(job, api.EventTypeNormal, "Suspended", "Job suspended")
			st.StartTime = nil
		case !suspended && setCondition(st, api.JobSuspended, api.ConditionFalse, "JobResumed", "Job resumed", now):
			c.recorder.Event(job, api.EventTypeNormal, "Resumed", "Job resumed")
			st.StartTime = new(api.NewTime(now))
		}
	}

	// Accounting (steps 2 and 3 of tracking.go): which held pods go free,
	// and which of them are counted.
	var release []*api.Pod
	newIndexes := 0
	capped := false
	for _, p := range pods {
		if !holding[p.UID] {
			continue
		}
		ix := -1
		if indexed {
			ix = podIndex(p, completions)
		}
		podFailed := isPodFailed(p, job, failing || finishing && failReason != "")
		if !finishing && p.Status.Phase != api.PodSucceeded && (!podFailed || ix >= 0 && delayed[ix] == p) {
			continue
		}
		release = append(release, p)
		switch {
		case p.Status.Phase == api.PodSucceeded:
			if indexed {
				if ix >= 0 && !prevDone[ix] {
					newIndexes++
				}
			} else if !unc.has(p.UID) {
				unc.succeeded = append(unc.succeeded, p.UID)
			}
		case podFailed || failReason != "":
			// A failing job's every unfinished pod counts as failed.
			if unc.has(p.UID) || indexed && ix < 0 {
				break
			}
			if action, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); action != api.PodFailurePolicyActionIgnore {
				unc.failed = append(unc.failed, p.UID)
			}
		}
		if newIndexes+unc.size() >= MaxUncountedPods {
			capped = true
			break
		}
	}
	if indexed {
		st.Succeeded = int32(len(done))
		st.CompletedIndexes = formatIndexes(done)
		if perIndex {
			st.FailedIndexes = new(formatIndexes(failedIdx))
		}
	}
	// The interim condition first; the terminal one once every pod is
	// counted and none is terminating.
	switch {
	case !finishing:
	case failReason != "":
		if target == nil {
			setCondition(st, api.JobFailureTarget, api.ConditionTrue, failReason, failMessage, now)
		}
	default:
		if conditionOf(st, api.JobSuccessCriteriaMet) == nil {
			setCondition(st, api.JobSuccessCriteriaMet, api.ConditionTrue, successReason, successMessage, now)
		}
	}
	unc.store(st)
	st.Active = activeCount
	st.Ready = &ready
	st.Terminating = &terminating
	if !reflect.DeepEqual(cached.Status, job.Status) {
		if job, err = c.updateStatus(ctx, job); err != nil {
			// The pods stay held: nothing of this sync is recorded.
			return errors.Join(append(errs, err)...)
		}
		st = &job.Status
	}
	// Recorded: the pods may go, and those gone are counted.
	ok, rmErr := c.releasePods(ctx, key, release)
	for i, p := range release {
		if ok[i] {
			delete(holding, p.UID)
		}
	}
	unc = newUncounted(st)
	changed := unc.count(st, holding)
	unc.store(st)
	finished := finishing && !capped && rmErr == nil && unc.empty() && terminating == 0
	if finished {
		if failReason != "" {
			setCondition(st, api.JobFailed, api.ConditionTrue, failReason, failMessage, now)
		} else {
			// Complete repeats the reason and message of SuccessCriteriaMet.
			setCondition(st, api.JobComplete, api.ConditionTrue, successReason, successMessage, now)
			st.CompletionTime = new(api.NewTime(now))
		}
	}
	if changed || finished {
		if _, err := c.updateStatus(ctx, job); err != nil {
			return errors.Join(append(errs, rmErr, err)...)
		}
	}
	switch {
	case !finished:
	case failReason != "":
		c.recorder.Event(job, api.EventTypeWarning, failReason, failMessage)
		c.log.Info("job failed", "job", key, "reason", failReason)
	default:
		c.recorder.Event(job, api.EventTypeNormal, "Completed", "Job completed")
		c.log.Info("job completed", "job", key)
	}
	if requeue > 0 {
		c.Queue.AddAfter(key, requeue)
	}
	return errors.Join(append(errs, rmErr)...)
}

// updateStatus writes the job's status and returns the job stored.
func (c *Controller) updateStatus(ctx context.Context, job *api.Job) (*api.Job, error) {
	out, err := client.Resource[api.Job](c.client).Namespace(job.Namespace).UpdateStatus(ctx, job)
	if err != nil {
		return job, fmt.Errorf("update status of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	c.written.wrote(cache.MetaNamespaceKeyFunc(out), out.ResourceVersion)
	return out, nil
}

// writtenVersions are the resourceVersions of the controller's last status
// write per job, until its cache shows them.
type writtenVersions struct {
	mu sync.Mutex
	m  map[string]int64
}

func (w *writtenVersions) wrote(key, rv string) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]int64{}
	}
	w.m[key] = max(w.m[key], n)
}

// seen reports whether a cached job at rv reflects the last write.
func (w *writtenVersions) seen(key, rv string) bool {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n < w.m[key] {
		return false
	}
	delete(w.m, key)
	return true
}

func (w *writtenVersions) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// conditionOf returns the True condition of type t, or nil.
func conditionOf(st *api.JobStatus, t api.JobConditionType) *api.JobCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t && st.Conditions[i].Status == api.ConditionTrue {
			return &st.Conditions[i]
		}
	}
	return nil
}

// manageJob creates or deletes pods so that the job runs as many as it
// should: parallelism, but no more than the completions still missing; no
// new pods once a job without completions had a success. Replacements of
// failed pods wait for the back-off; terminating pods not yet failed (held,
// under podReplacementPolicy Failed) keep their places. It returns the
// number of active pods after (new pods count, as in kube), how many it
// deleted, and how long until the back-off ends. An Indexed job's new pods
// take the lowest pending indexes; with backoffLimitPerIndex an index
// waits out its own back-off, from its delayed failed pod, whose failure
// counts its new pod carries on.
func (c *Controller) manageJob(ctx context.Context, job *api.Job, key string, active []*api.Pod, held int32, pending []int, delayed map[int]*api.Pod, succeeded, failed int32, lastFailure time.Time, suspended bool, now time.Time) (int32, int32, time.Duration, []error) {
	parallelism := int32(1)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	want := parallelism
	switch {
	case suspended:
		want = 0
	case job.Spec.Completions != nil:
		want = min(parallelism, *job.Spec.Completions-succeeded)
	case succeeded > 0:
		want = min(want, int32(len(active)))
	}
	want = max(want-held, 0)
	n := int32(len(active))
	switch {
	case n > want:
		extra := append([]*api.Pod(nil), active...)
		sort.Sort(controller.PodsByDeletionPreference{Pods: extra})
		extra = extra[:n-want]
		deleted, errs := c.deletePods(ctx, job, key, extra, true)
		return n - deleted, deleted, 0, errs
	case n < want:
		indexed := job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == api.IndexedCompletion
		perIndex := indexed && job.Spec.BackoffLimitPerIndex != nil
		var wait time.Duration
		if perIndex {
			// Each index waits out its own back-off, as kube's
			// getPodCreationInfoForIndependentIndexes.
			var due []int
			for _, i := range pending {
				if d := delayed[i]; d != nil {
					if until := finishTime(d).Add(c.backoff(absoluteIndexFailures(d) + 1)); now.Before(until) {
						if left := until.Sub(now); wait == 0 || left < wait {
							wait = left
						}
						continue
					}
				}
				due = append(due, i)
			}
			pending = due
		} else if failed > 0 {
			if until := lastFailure.Add(c.backoff(failed)); now.Before(until) {
				return n, 0, until.Sub(now), nil
			}
		}
		diff := int(want - n)
		if indexed {
			// Failed indexes (backoffLimitPerIndex) run no more.
			diff = min(diff, len(pending))
		}
		if diff <= 0 {
			return n, 0, wait, nil
		}
		c.expectations.ExpectCreations(key, diff)
		ref := controller.NewControllerRef(&job.ObjectMeta, "batch/v1", "Job")
		var errs []error
		tracked := trackedTemplate(&job.Spec.Template)
		for k := range diff {
			template := tracked
			if indexed {
				template = indexedTemplate(job, tracked, pending[k], nextIndexFailures(job, delayed[pending[k]]))
			}
			if err := c.podControl.CreatePod(ctx, job.Namespace, template, job, ref); err != nil {
				c.expectations.CreationObserved(key)
				errs = append(errs, err)
				continue
			}
			n++
		}
		return n, 0, wait, errs
	}
	return n, 0, 0, nil
}

// backoff is the delay before the pod that follows failures failures:
// Backoff doubling with each, up to MaxBackoff.
func (c *Controller) backoff(failures int32) time.Duration {
	d := c.Backoff
	for i := int32(1); i < failures && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// deletePods deletes pods of the job and returns how many it deleted (a
// pod already gone counts). With release, as kube's deleteJobPods (excess
// pods, a suspended job's, duplicate indexes), each pod's tracking
// finalizer goes first: such a pod is not counted as failed. Without it, as
// kube's deleteActivePods (a finishing job's), the pods stay held until
// they are counted.
func (c *Controller) deletePods(ctx context.Context, job *api.Job, key string, pods []*api.Pod, release bool) (int32, []error) {
	if len(pods) == 0 {
		return 0, nil
	}
	keys := make([]string, len(pods))
	for i, p := range pods {
		keys[i] = controller.PodKey(p)
	}
	c.expectations.ExpectDeletions(key, keys)
	var errs []error
	deleted := int32(0)
	for _, p := range pods {
		if release {
			if _, err := c.releasePods(ctx, "", []*api.Pod{p}); err != nil {
				c.expectations.DeletionObserved(key, controller.PodKey(p))
				errs = append(errs, err)
				continue
			}
		}
		if err := c.podControl.DeletePod(ctx, p.Namespace, p.Name, job); err != nil {
			c.expectations.DeletionObserved(key, controller.PodKey(p))
			if !apierrors.IsNotFound(err) {
				errs = append(errs, err)
				continue
			}
		}
		deleted++
	}
	return deleted, errs
}

// pastBackoffLimitOnFailure is kube's: with restartPolicy OnFailure failed
// containers restart in place, so their restarts count as failures.
func pastBackoffLimitOnFailure(job *api.Job, active []*api.Pod, limit int32) bool {
	if job.Spec.Template.Spec.RestartPolicy != api.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range active {
		for _, cs := range p.Status.InitContainerStatuses {
			restarts += cs.RestartCount
		}
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
	}
	if limit == 0 {
		return restarts > 0
	}
	return restarts >= limit
}

// finishTime is when a failed pod finished: its containers' latest exit,
// else its last condition change, else its creation.
func finishTime(p *api.Pod) time.Time {
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			t = latest(t, cs.State.Terminated.FinishedAt.Time)
		}
	}
	if t.IsZero() {
		for _, cond := range p.Status.Conditions {
			t = latest(t, cond.LastTransitionTime.Time)
		}
	}
	if t.IsZero() {
		t = p.CreationTimestamp.Time
	}
	return t
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// setCondition is kube's ensureJobConditionStatus: the condition of type t
// gets status, reason and message, and new times, when any of them
// differs; a False condition is not added. It tells whether it changed.
func setCondition(st *api.JobStatus, t api.JobConditionType, status api.ConditionStatus, reason, message string, now time.Time) bool {
	cond := api.JobCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastProbeTime: api.NewTime(now), LastTransitionTime: api.NewTime(now)}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type == t {
			if c.Status == status && c.Reason == reason && c.Message == message {
				return false
			}
			*c = cond
			return true
		}
	}
	if status == api.ConditionFalse {
		return false
	}
	st.Conditions = append(st.Conditions, cond)
	return true
}

// matchPodFailurePolicy returns the action of the first rule of policy
// matching the failed pod, and for FailJob kube's message naming what
// matched; "" when no rule matches (the failure counts).
func matchPodFailurePolicy(policy *api.PodFailurePolicy, p *api.Pod) (api.PodFailurePolicyAction, string) {
	if policy == nil {
		return "", ""
	}
	for i, rule := range policy.Rules {
		if req := rule.OnExitCodes; req != nil {
			statuses := append(append([]api.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
			for _, cs := range statuses {
				term := cs.State.Terminated
				if term == nil || term.ExitCode == 0 || req.ContainerName != nil && *req.ContainerName != cs.Name {
					continue
				}
				if slices.Contains(req.Values, term.ExitCode) == (req.Operator == "In") {
					return rule.Action, fmt.Sprintf("Container %s for pod %s/%s failed with exit code %d matching %s rule at index %d",
						cs.Name, p.Namespace, p.Name, term.ExitCode, rule.Action, i)
				}
			}
		}
		for _, pat := range rule.OnPodConditions {
			want := pat.Status
			if want == "" {
				want = api.ConditionTrue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == pat.Type && c.Status == want {
					return rule.Action, fmt.Sprintf("Pod %s/%s has condition %s matching %s rule at index %d",
						p.Namespace, p.Name, c.Type, rule.Action, i)
				}
			}
		}
	}
	return "", ""
}
