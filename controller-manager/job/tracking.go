package job

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
)

// A Job's pods are created with the batch.kubernetes.io/job-tracking
// finalizer, as kube's, so that none can vanish before it is counted. A
// sync, in kube's order (trackJobStatusAndRemoveFinalizers):
//
//  1. counts the UIDs of status.uncountedTerminatedPods whose pods no
//     longer hold the finalizer (or are gone) into status.succeeded or
//     status.failed;
//  2. writes the UID of each finished pod still holding the finalizer to
//     uncountedTerminatedPods (an Indexed job's succeeded pod has its index
//     written to completedIndexes instead), at most MaxUncountedPods of
//     them, and stores that status;
//  3. only then removes those pods' finalizers;
//  4. counts the pods it released and stores the status again, with the
//     terminal condition once nothing is uncounted or terminating.
//
// Each pod is thus counted exactly once, whoever deletes it and whenever
// the controller restarts: every status write carries the job's
// resourceVersion, so a stale copy of the job cannot count a pod twice,
// and a pod whose finalizer removal the informer has not shown yet is
// taken as released (finalizerExpectations). A pod that is being deleted
// before it succeeded counts as failed.
// Finished pods without the finalizer (made before tracking, or already
// counted) are not counted again.

// MaxUncountedPods caps the pods one sync adds to
// status.uncountedTerminatedPods (and releases), as kube's: the status
// stays small and a large job does not starve the others; the writes and
// pod updates bring the job back for the rest.
const MaxUncountedPods = 500

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

// releasePods removes the tracking finalizer from pods and tells, pod by
// pod, whether it is gone (a pod already deleted is released). With a job
// key, the removals are expected until the informer shows them, so that a
// later sync reading a pod that still holds the finalizer in its cache does
// not count it again.
func (c *Controller) releasePods(ctx context.Context, key string, pods []*api.Pod) ([]bool, error) {
	released := make([]bool, len(pods))
	if key != "" {
		uids := make([]api.UID, 0, len(pods))
		for _, p := range pods {
			uids = append(uids, p.UID)
		}
		c.finalizers.expect(key, uids)
	}
	var errs []error
	for i, p := range pods {
		if !hasTrackingFinalizer(p) {
			released[i] = true
			continue
		}
		_, err := client.Resource[api.Pod](c.client).Namespace(p.Namespace).Patch(ctx, p.Name, client.StrategicMergePatchType, removeTrackingFinalizer)
		if err != nil && !apierrors.IsNotFound(err) {
			if key != "" {
				c.finalizers.observed(key, p.UID)
			}
			errs = append(errs, fmt.Errorf("remove the tracking finalizer of pod %s/%s: %w", p.Namespace, p.Name, err))
			continue
		}
		released[i] = true
	}
	return released, errors.Join(errs...)
}

// finalizerExpectations are, per job, the pods whose tracking finalizer
// the controller removed and whose update its informer has not shown yet
// (kube's uidTrackingExpectations): their UIDs count as released.
type finalizerExpectations struct {
	mu sync.Mutex
	m  map[string]map[api.UID]bool
}

func (f *finalizerExpectations) expect(key string, uids []api.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]map[api.UID]bool{}
	}
	set := f.m[key]
	if set == nil {
		set = map[api.UID]bool{}
		f.m[key] = set
	}
	for _, uid := range uids {
		set[uid] = true
	}
}

// observed drops uid: its pod was seen without the finalizer, or deleted,
// or its removal failed.
func (f *finalizerExpectations) observed(key string, uid api.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if set := f.m[key]; set != nil {
		delete(set, uid)
		if len(set) == 0 {
			delete(f.m, key)
		}
	}
}

// expected returns a copy of the UIDs expected to be released for key.
func (f *finalizerExpectations) expected(key string) map[api.UID]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.m[key])
}

func (f *finalizerExpectations) delete(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
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

func (u *uncounted) size() int { return len(u.succeeded) + len(u.failed) }

func (u *uncounted) empty() bool { return len(u.succeeded)+len(u.failed) == 0 }

// count moves the UIDs whose pods no longer hold the finalizer into the
// status counters (step 3), and tells whether it moved any.
func (u *uncounted) count(st *api.JobStatus, holding map[api.UID]bool) bool {
	before := u.size()
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
	return u.size() != before
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
	_, err := c.releasePods(ctx, "", orphans)
	return err
}
