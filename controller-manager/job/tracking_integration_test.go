package job_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// jobPods returns every pod of the job, finished and deleted ones included.
func jobPods(t *testing.T, cl *controllermanagertest.Cluster, job string) []api.Pod {
	t.Helper()
	l, err := client.Resource[api.Pod](cl.Client).Namespace(ns).List(cl.Context(10*time.Second), client.ListOptions{LabelSelector: api.JobNameLabel + "=" + job})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// waitActive waits until the job has n active pods and returns them.
func waitActive(t *testing.T, cl *controllermanagertest.Cluster, job string, n int) []api.Pod {
	t.Helper()
	var active []api.Pod
	cl.Eventually(60*time.Second, fmt.Sprintf("%d active pods of %s", n, job), func() (bool, error) {
		active = activePods(t, cl, job)
		return len(active) == n, fmt.Errorf("%d active", len(active))
	})
	return active
}

// failPod ends a pod as its kubelet would when its container exits with code.
func failPod(t *testing.T, cl *controllermanagertest.Cluster, p api.Pod, code int32) {
	t.Helper()
	p.Status.Phase = api.PodFailed
	p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: code, FinishedAt: api.Now()}}}}
	if _, err := client.Resource[api.Pod](cl.Client).Namespace(ns).UpdateStatus(cl.Context(10*time.Second), &p); err != nil {
		t.Fatal(err)
	}
}

// waitStatus waits for the job's status to satisfy cond.
func waitStatus(t *testing.T, cl *controllermanagertest.Cluster, name, what string, cond func(j *api.Job) bool) *api.Job {
	t.Helper()
	var j *api.Job
	cl.Eventually(60*time.Second, what, func() (bool, error) {
		var err error
		j, err = client.Resource[api.Job](cl.Client).Namespace(ns).Get(cl.Context(10*time.Second), name)
		if err != nil {
			return false, err
		}
		return cond(j), fmt.Errorf("status %+v", j.Status)
	})
	return j
}

func uncountedEmpty(j *api.Job) bool {
	u := j.Status.UncountedTerminatedPods
	return u == nil || len(u.Succeeded)+len(u.Failed) == 0
}

// TestJobTracking runs jobs on a real apiserver through the job-tracking
// finalizer: pods counted exactly once whoever deletes them, Indexed pod
// names, per-index back-off limits and the FailIndex action.
func TestJobTracking(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"job", "garbagecollector"}, nil)
	ctx := cl.Context(3 * time.Minute)
	cl.Namespace(ns)
	jobs := client.Resource[api.Job](cl.Client).Namespace(ns)
	pods := client.Resource[api.Pod](cl.Client).Namespace(ns)

	t.Run("each pod counted once, deleted or not", func(t *testing.T) {
		if _, err := jobs.Create(ctx, newJob("once", 2, 2, 6)); err != nil {
			t.Fatal(err)
		}
		active := waitActive(t, cl, "once", 2)
		for _, p := range active {
			if !slices.Contains(p.Finalizers, api.JobTrackingFinalizer) {
				t.Fatalf("pod %s has finalizers %v, want %s", p.Name, p.Finalizers, api.JobTrackingFinalizer)
			}
		}
		// One succeeds and is deleted at once, before or after the
		// controller saw it; the other is deleted while it runs, which
		// counts as a failure (and is replaced).
		cl.SetPodStatus(ns, active[0].Name, api.PodSucceeded, "", false)
		if err := pods.Delete(ctx, active[0].Name, nil); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, active[1].Name, nil); err != nil {
			t.Fatal(err)
		}
		j := waitStatus(t, cl, "once", "the deleted pods counted", func(j *api.Job) bool {
			return j.Status.Succeeded == 1 && j.Status.Failed == 1 && uncountedEmpty(j)
		})
		if j.Status.UncountedTerminatedPods == nil {
			t.Errorf("status.uncountedTerminatedPods unset once tracking began: %+v", j.Status)
		}
		// Both are gone for good once counted.
		cl.Eventually(30*time.Second, "the deleted pods gone", func() (bool, error) {
			for _, name := range []string{active[0].Name, active[1].Name} {
				if _, err := pods.Get(ctx, name); !apierrors.IsNotFound(err) {
					return false, fmt.Errorf("pod %s: %v", name, err)
				}
			}
			return true, nil
		})
		// The replacement (after the 10 s back-off) completes the job.
		next := waitActive(t, cl, "once", 1)
		cl.SetPodStatus(ns, next[0].Name, api.PodSucceeded, "", false)
		j = waitStatus(t, cl, "once", "complete with exact counts", func(j *api.Job) bool {
			return condition(j, api.JobComplete) != nil
		})
		if j.Status.Succeeded != 2 || j.Status.Failed != 1 || !uncountedEmpty(j) || condition(j, api.JobSuccessCriteriaMet) == nil || j.Status.CompletionTime == nil {
			t.Errorf("final status %+v", j.Status)
		}
		// No pod of a finished job keeps the finalizer.
		cl.Eventually(30*time.Second, "finalizers released", func() (bool, error) {
			for _, p := range jobPods(t, cl, "once") {
				if slices.Contains(p.Finalizers, api.JobTrackingFinalizer) {
					return false, fmt.Errorf("pod %s still has %v", p.Name, p.Finalizers)
				}
			}
			return true, nil
		})
	})

	t.Run("a deleted job frees its pods", func(t *testing.T) {
		if _, err := jobs.Create(ctx, newJob("dropped", 2, 2, 6)); err != nil {
			t.Fatal(err)
		}
		waitActive(t, cl, "dropped", 2)
		if err := jobs.Delete(ctx, "dropped", &api.DeleteOptions{PropagationPolicy: new(api.DeletePropagationBackground)}); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(30*time.Second, "the job's pods gone", func() (bool, error) {
			left := jobPods(t, cl, "dropped")
			return len(left) == 0, fmt.Errorf("%d pods left: %+v", len(left), left)
		})
	})

	t.Run("indexed pod names", func(t *testing.T) {
		j := newJob("names", 2, 2, 6)
		j.Spec.CompletionMode = new(api.IndexedCompletion)
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		for _, p := range waitActive(t, cl, "names", 2) {
			idx := p.Annotations[api.JobCompletionIndexAnnotation]
			if !regexp.MustCompile(`^names-`+idx+`-[a-z0-9]{5}$`).MatchString(p.Name) || p.GenerateName != "names-"+idx+"-" || p.Spec.Hostname != "names-"+idx {
				t.Errorf("pod %s (generateName %q, hostname %q) of index %s", p.Name, p.GenerateName, p.Spec.Hostname, idx)
			}
		}
		// A long job name is cut so that index and suffix fit in 63.
		long := strings.Repeat("x", 60)
		j = newJob(long, 1, 1, 6)
		j.Spec.CompletionMode = new(api.IndexedCompletion)
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		p := waitActive(t, cl, long, 1)[0]
		if want := long[:55] + "-0-"; p.GenerateName != want || len(p.Name) != 63 || p.Spec.Hostname != long+"-0" {
			t.Errorf("pod %s (generateName %q, hostname %q), want generateName %q", p.Name, p.GenerateName, p.Spec.Hostname, want)
		}
	})

	t.Run("backoffLimitPerIndex and FailIndex", func(t *testing.T) {
		j := newJob("per-index", 3, 3, 6)
		j.Spec.BackoffLimit = nil
		j.Spec.CompletionMode = new(api.IndexedCompletion)
		j.Spec.BackoffLimitPerIndex = new(int32(1))
		j.Spec.PodFailurePolicy = &api.PodFailurePolicy{Rules: []api.PodFailurePolicyRule{
			{Action: api.PodFailurePolicyActionFailIndex, OnExitCodes: &api.PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{42}}}}}
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		byIndex := func(ps []api.Pod) map[string]api.Pod {
			out := map[string]api.Pod{}
			for _, p := range ps {
				out[p.Annotations[api.JobCompletionIndexAnnotation]] = p
			}
			return out
		}
		first := byIndex(waitActive(t, cl, "per-index", 3))
		for idx, p := range first {
			if p.Annotations[api.JobIndexFailureCountAnnotation] != "0" {
				t.Errorf("index %s: failure count %q, want 0", idx, p.Annotations[api.JobIndexFailureCountAnnotation])
			}
		}
		// Index 0 fails within its budget of 1; index 1 fails by the
		// FailIndex rule; index 2 succeeds.
		failPod(t, cl, first["0"], 1)
		failPod(t, cl, first["1"], 42)
		cl.SetPodStatus(ns, first["2"].Name, api.PodSucceeded, "", false)
		waitStatus(t, cl, "per-index", "index 1 failed at once", func(j *api.Job) bool {
			return j.Status.FailedIndexes != nil && *j.Status.FailedIndexes == "1" && j.Status.CompletedIndexes == "2"
		})
		// Index 0 gets a second pod (after the back-off) that knows of the
		// first failure; index 1 none.
		second := waitActive(t, cl, "per-index", 1)[0]
		if second.Annotations[api.JobCompletionIndexAnnotation] != "0" || second.Annotations[api.JobIndexFailureCountAnnotation] != "1" {
			t.Fatalf("replacement pod annotations %v", second.Annotations)
		}
		failPod(t, cl, second, 1)
		done := waitStatus(t, cl, "per-index", "Failed with FailedIndexes", func(j *api.Job) bool {
			return condition(j, api.JobFailed) != nil
		})
		c := condition(done, api.JobFailed)
		if c.Reason != api.JobReasonFailedIndexes || c.Message != "Job has failed indexes" || *done.Status.FailedIndexes != "0-1" ||
			done.Status.CompletedIndexes != "2" || done.Status.Failed != 3 || done.Status.Succeeded != 1 || !uncountedEmpty(done) {
			t.Errorf("final status %+v, condition %+v", done.Status, c)
		}
		for _, p := range jobPods(t, cl, "per-index") {
			if p.Annotations[api.JobCompletionIndexAnnotation] == "1" && p.Name != first["1"].Name {
				t.Errorf("index 1 failed by FailIndex was retried: %s", p.Name)
			}
		}
	})

	t.Run("maxFailedIndexes", func(t *testing.T) {
		j := newJob("max-failed", 2, 2, 6)
		j.Spec.BackoffLimit = nil
		j.Spec.CompletionMode = new(api.IndexedCompletion)
		j.Spec.BackoffLimitPerIndex = new(int32(0))
		j.Spec.MaxFailedIndexes = new(int32(0))
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		active := waitActive(t, cl, "max-failed", 2)
		failPod(t, cl, active[0], 1)
		done := waitStatus(t, cl, "max-failed", "Failed with MaxFailedIndexesExceeded", func(j *api.Job) bool {
			return condition(j, api.JobFailed) != nil
		})
		c := condition(done, api.JobFailed)
		if c.Reason != api.JobReasonMaxFailedIndexesExceeded || c.Message != "Job has exceeded the specified maximal number of failed indexes" ||
			!strings.Contains(*done.Status.FailedIndexes, active[0].Annotations[api.JobCompletionIndexAnnotation]) || condition(done, api.JobFailureTarget) == nil {
			t.Errorf("final status %+v, condition %+v", done.Status, c)
		}
		// The other index's pod was stopped, and counted as failed.
		if n := len(activePods(t, cl, "max-failed")); n != 0 || done.Status.Failed != 2 {
			t.Errorf("%d pods still active, failed %d", n, done.Status.Failed)
		}
	})
}

// TestIndexFailureCountSurvivesDeletion: with backoffLimitPerIndex, an
// index's failures are counted in its pods' annotations; a failed pod
// keeps its tracking finalizer until its index has a new pod, as in kube,
// so deleting it does not reset the count: the index still fails once it
// is past its limit.
func TestIndexFailureCountSurvivesDeletion(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"job"}, nil)
	ctx := cl.Context(3 * time.Minute)
	cl.Namespace(ns)
	pods := client.Resource[api.Pod](cl.Client).Namespace(ns)
	j := newJob("recount", 1, 1, 6)
	j.Spec.BackoffLimit = nil
	j.Spec.CompletionMode = new(api.IndexedCompletion)
	j.Spec.BackoffLimitPerIndex = new(int32(1))
	if _, err := client.Resource[api.Job](cl.Client).Namespace(ns).Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	first := waitActive(t, cl, "recount", 1)[0]
	failPod(t, cl, first, 1)
	// Someone deletes the failed pod before its replacement exists.
	if err := pods.Delete(ctx, first.Name, nil); err != nil {
		t.Fatal(err)
	}
	p, err := pods.Get(ctx, first.Name)
	if err != nil || !slices.Contains(p.Finalizers, api.JobTrackingFinalizer) {
		t.Fatalf("the failed pod of an index without a new pod lost its finalizer: %v %+v", err, p)
	}
	second := waitActive(t, cl, "recount", 1)[0]
	if second.Annotations[api.JobIndexFailureCountAnnotation] != "1" {
		t.Fatalf("new pod of index 0 has failure count %q, want 1", second.Annotations[api.JobIndexFailureCountAnnotation])
	}
	cl.Eventually(30*time.Second, "the deleted pod gone once replaced", func() (bool, error) {
		_, err := pods.Get(ctx, first.Name)
		return apierrors.IsNotFound(err), err
	})
	failPod(t, cl, second, 1)
	done := waitStatus(t, cl, "recount", "Failed with FailedIndexes", func(j *api.Job) bool { return condition(j, api.JobFailed) != nil })
	c := condition(done, api.JobFailed)
	if c.Reason != api.JobReasonFailedIndexes || *done.Status.FailedIndexes != "0" || done.Status.Failed != 2 || !uncountedEmpty(done) {
		t.Errorf("final status %+v, condition %+v", done.Status, c)
	}
	if n := len(jobPods(t, cl, "recount")); n > 1 {
		t.Errorf("%d pods of index 0, want no third one", n)
	}
}
