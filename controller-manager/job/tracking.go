package job

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// A Job's pods are created with the batch.kubernetes.io/job-tracking
// finalizer, as kube's, so that none can vanish before it is counted:
//
//  1. a finished pod still holding the finalizer has its UID written to
//     status.uncountedTerminatedPods (an Indexed job's succeeded pod has its
//     index written to completedIndexes instead);
//  2. only once that status is stored is the finalizer removed;
//  3. a later sync, seeing an uncounted UID whose pod no longer holds the
//     finalizer (or is gone), adds it to status.succeeded or status.failed
//     and drops it from the list.
//
// Each pod is thus counted exactly once, whoever deletes it and whenever
// the controller restarts: the status write of step 3 carries the job's
// resourceVersion, so a stale copy of the job cannot count a pod twice. A
// pod that is being deleted before it succeeded counts as failed.
// Finished pods without the finalizer (made before tracking, or already
// counted) are not counted again.

// hasTrackingFinalizer reports whether p is still to be counted.
func hasTrackingFinalizer(p *api.Pod) bool {
	return slices.Contains(p.Finalizers, api.JobTrackingFinalizer)
}

// isPodFailed is kube's: failed, or deleted before it succeeded (an
// orphaned or evicted pod may never reach the Failed phase) unless the
// job replaces only Failed pods (podReplacementPolicy Failed, implied by
// a pod failure policy) — but once the job is failing, every pod it
// stopped counts as failed.
func isPodFailed(p *api.Pod, job *api.Job, failing bool) bool {
	if p.Status.Phase == api.PodFailed {
		return true
	}
	onlyFailed := job.Spec.PodFailurePolicy != nil || job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == "Failed"
	if onlyFailed && !failing {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != api.PodSucceeded
}

// removeTrackingFinalizer is the strategic merge patch kube sends: it
// removes only this finalizer, whatever others the pod has meanwhile.
var removeTrackingFinalizer = []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + api.JobTrackingFinalizer + `"]}}`)

// releasePods removes the tracking finalizer from pods; a pod already gone
// is released.
func (c *Controller) releasePods(ctx context.Context, pods []*api.Pod) error {
	var errs []error
	for _, p := range pods {
		if !hasTrackingFinalizer(p) {
			continue
		}
		_, err := client.Resource[api.Pod](c.client).Namespace(p.Namespace).Patch(ctx, p.Name, client.StrategicMergePatchType, removeTrackingFinalizer)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove the tracking finalizer of pod %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// uncounted is status.uncountedTerminatedPods being worked on.
type uncounted struct {
	succeeded, failed []api.UID
}

func newUncounted(st *api.JobStatus) *uncounted {
	u := &uncounted{}
	if st.UncountedTerminatedPods != nil {
		u.succeeded = slices.Clone(st.UncountedTerminatedPods.Succeeded)
		u.failed = slices.Clone(st.UncountedTerminatedPods.Failed)
	}
	return u
}

func (u *uncounted) has(uid api.UID) bool {
	return slices.Contains(u.succeeded, uid) || slices.Contains(u.failed, uid)
}

func (u *uncounted) empty() bool { return len(u.succeeded)+len(u.failed) == 0 }

// count moves the UIDs whose pods no longer hold the finalizer into the
// status counters (step 3).
func (u *uncounted) count(st *api.JobStatus, holding map[api.UID]bool) {
	keep := func(uids []api.UID, counter *int32) []api.UID {
		out := uids[:0]
		for _, uid := range uids {
			if holding[uid] {
				out = append(out, uid)
			} else {
				*counter++
			}
		}
		return out
	}
	u.succeeded = keep(u.succeeded, &st.Succeeded)
	u.failed = keep(u.failed, &st.Failed)
}

// store writes the lists back into st: kube keeps the field, empty lists
// included, once tracking began.
func (u *uncounted) store(st *api.JobStatus) {
	st.UncountedTerminatedPods = &api.UncountedTerminatedPods{Succeeded: u.succeeded, Failed: u.failed}
	if len(u.succeeded) == 0 {
		st.UncountedTerminatedPods.Succeeded = nil
	}
	if len(u.failed) == 0 {
		st.UncountedTerminatedPods.Failed = nil
	}
}

// releaseOrphans removes the finalizer from the pods of a Job that is gone
// (deleted, or recreated under its name with another UID): nothing will
// count them any more, and the finalizer would keep them forever.
func (c *Controller) releaseOrphans(ctx context.Context, ns, name string, uid api.UID) error {
	var orphans []*api.Pod
	for _, p := range c.pods.Lister().Namespace(ns).List(nil) {
		ref := api.GetControllerOf(&p.ObjectMeta)
		if ref != nil && ref.Kind == "Job" && ref.Name == name && ref.UID != uid && hasTrackingFinalizer(p) {
			orphans = append(orphans, p)
		}
	}
	return c.releasePods(ctx, orphans)
}
