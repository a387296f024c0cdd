package job_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

const ns = "jobs"

func newJob(name string, completions, parallelism, backoffLimit int32) *api.Job {
	return &api.Job{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: api.JobSpec{Completions: &completions, Parallelism: &parallelism, BackoffLimit: &backoffLimit,
			Template: api.PodTemplateSpec{Spec: api.PodSpec{RestartPolicy: api.RestartPolicyNever,
				Containers: []api.Container{{Name: "c", Image: "busybox", Command: []string{"true"}}}}}}}
}

// activePods returns the job's pods that are neither terminal nor deleted.
func activePods(t *testing.T, cl *controllermanagertest.Cluster, job string) []api.Pod {
	t.Helper()
	l, err := client.Resource[api.Pod](cl.Client).Namespace(ns).List(cl.Context(10*time.Second), client.ListOptions{LabelSelector: api.JobNameLabel + "=" + job})
	if err != nil {
		t.Fatal(err)
	}
	var out []api.Pod
	for _, p := range l.Items {
		if p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func condition(j *api.Job, t api.JobConditionType) *api.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t && j.Status.Conditions[i].Status == api.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func TestJobs(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"job", "ttl-after-finished", "garbagecollector"}, nil)
	ctx := cl.Context(3 * time.Minute)
	cl.Namespace(ns)
	jobs := client.Resource[api.Job](cl.Client).Namespace(ns)

	t.Run("completes", func(t *testing.T) {
		if _, err := jobs.Create(ctx, newJob("ok", 3, 2, 6)); err != nil {
			t.Fatal(err)
		}
		done := 0
		for done < 3 {
			var active []api.Pod
			cl.Eventually(30*time.Second, "job pods running", func() (bool, error) {
				active = activePods(t, cl, "ok")
				return len(active) == min(2, 3-done), fmt.Errorf("%d active", len(active))
			})
			for _, p := range active {
				if p.Labels[api.JobControllerUIDLabel] == "" || p.Labels[api.LegacyJobNameLabel] != "ok" ||
					len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Job" || p.Spec.RestartPolicy != api.RestartPolicyNever {
					t.Fatalf("pod %s: labels %v ownerReferences %+v", p.Name, p.Labels, p.OwnerReferences)
				}
			}
			// The simulated kubelet finishes one pod at a time.
			cl.SetPodStatus(ns, active[0].Name, api.PodSucceeded, "", false)
			done++
		}
		cl.Eventually(30*time.Second, "Complete condition", func() (bool, error) {
			j, err := jobs.Get(ctx, "ok")
			if err != nil {
				return false, err
			}
			return condition(j, api.JobComplete) != nil && j.Status.Succeeded == 3 && j.Status.Active == 0 &&
				j.Status.StartTime != nil && j.Status.CompletionTime != nil, fmt.Errorf("status %+v", j.Status)
		})
		if n := len(activePods(t, cl, "ok")); n != 0 {
			t.Fatalf("%d pods still active after completion", n)
		}
	})

	t.Run("fails over its backoff limit", func(t *testing.T) {
		if _, err := jobs.Create(ctx, newJob("bad", 1, 1, 1)); err != nil {
			t.Fatal(err)
		}
		// backoffLimit 1: the first failure is replaced (after the 10 s
		// back-off), the second fails the job.
		for failures := 0; failures < 2; failures++ {
			var active []api.Pod
			cl.Eventually(60*time.Second, fmt.Sprintf("pod %d of the failing job", failures+1), func() (bool, error) {
				active = activePods(t, cl, "bad")
				return len(active) == 1, nil
			})
			cl.SetPodStatus(ns, active[0].Name, api.PodFailed, "", false)
		}
		cl.Eventually(30*time.Second, "Failed condition with BackoffLimitExceeded", func() (bool, error) {
			j, err := jobs.Get(ctx, "bad")
			if err != nil {
				return false, err
			}
			c := condition(j, api.JobFailed)
			return c != nil && c.Reason == api.JobReasonBackoffLimitExceeded && j.Status.Failed == 2 && j.Status.CompletionTime == nil, fmt.Errorf("status %+v", j.Status)
		})
		time.Sleep(time.Second)
		if n := len(activePods(t, cl, "bad")); n != 0 {
			t.Fatalf("failed job has %d active pods", n)
		}
		evs, err := client.Resource[api.Event](cl.Client).Namespace(ns).List(ctx, client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reasons := map[string]bool{}
		for _, e := range evs.Items {
			if e.Source.Component == "job-controller" {
				reasons[e.InvolvedObject.Name+"/"+e.Reason] = true
			}
		}
		for _, want := range []string{"ok/SuccessfulCreate", "ok/Completed", "bad/SuccessfulCreate", "bad/BackoffLimitExceeded"} {
			if !reasons[want] {
				t.Errorf("no %s event; have %v", want, reasons)
			}
		}
	})

	t.Run("deadline", func(t *testing.T) {
		j := newJob("slow", 1, 1, 6)
		j.Spec.ActiveDeadlineSeconds = new(int64(2))
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		cl.Eventually(30*time.Second, "Failed condition with DeadlineExceeded", func() (bool, error) {
			j, err := jobs.Get(ctx, "slow")
			if err != nil {
				return false, err
			}
			c := condition(j, api.JobFailed)
			return c != nil && c.Reason == api.JobReasonDeadlineExceeded, nil
		})
		if n := len(activePods(t, cl, "slow")); n != 0 {
			t.Fatalf("job past its deadline has %d active pods", n)
		}
	})

	t.Run("pod failure policy", func(t *testing.T) {
		j := newJob("policy", 1, 1, 6)
		j.Spec.PodFailurePolicy = &api.PodFailurePolicy{Rules: []api.PodFailurePolicyRule{
			{Action: api.PodFailurePolicyActionIgnore, OnPodConditions: []api.PodFailurePolicyOnPodConditionsPattern{{Type: api.DisruptionTarget, Status: api.ConditionTrue}}},
			{Action: api.PodFailurePolicyActionFailJob, OnExitCodes: &api.PodFailurePolicyOnExitCodesRequirement{Operator: "In", Values: []int32{42}}},
		}}
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		pods := client.Resource[api.Pod](cl.Client).Namespace(ns)
		fail := func(exitCode int32, cond *api.PodCondition) string {
			var active []api.Pod
			cl.Eventually(30*time.Second, "a pod of the policy job", func() (bool, error) {
				active = activePods(t, cl, "policy")
				return len(active) == 1, fmt.Errorf("%d active", len(active))
			})
			p := active[0]
			p.Status.Phase = api.PodFailed
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: exitCode}}}}
			if cond != nil {
				p.Status.Conditions = append(p.Status.Conditions, *cond)
			}
			if _, err := pods.UpdateStatus(ctx, &p); err != nil {
				t.Fatal(err)
			}
			return p.Name
		}
		// A disrupted pod is ignored: not counted, replaced at once (no
		// back-off, which would take 10 s).
		fail(137, &api.PodCondition{Type: api.DisruptionTarget, Status: api.ConditionTrue, Reason: "EvictionByEvictionAPI"})
		name := fail(42, nil)
		cl.Eventually(30*time.Second, "Failed condition with PodFailurePolicy", func() (bool, error) {
			j, err := jobs.Get(ctx, "policy")
			if err != nil {
				return false, err
			}
			c := condition(j, api.JobFailed)
			want := fmt.Sprintf("Container c for pod %s/%s failed with exit code 42 matching FailJob rule at index 1", ns, name)
			return c != nil && c.Reason == api.JobReasonPodFailurePolicy && c.Message == want && j.Status.Failed == 1 &&
				condition(j, api.JobFailureTarget) != nil, fmt.Errorf("status %+v", j.Status)
		})
	})

	t.Run("ttl after finished", func(t *testing.T) {
		j := newJob("short-lived", 1, 1, 6)
		j.Spec.TTLSecondsAfterFinished = new(int32(1))
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		var active []api.Pod
		cl.Eventually(30*time.Second, "pod of the ttl job", func() (bool, error) {
			active = activePods(t, cl, "short-lived")
			return len(active) == 1, nil
		})
		cl.SetPodStatus(ns, active[0].Name, api.PodSucceeded, "", false)
		cl.Eventually(30*time.Second, "job deleted after its ttl", func() (bool, error) {
			_, err := jobs.Get(ctx, "short-lived")
			return apierrors.IsNotFound(err), err
		})
		cl.Eventually(30*time.Second, "its pods deleted", func() (bool, error) {
			l, err := client.Resource[api.Pod](cl.Client).Namespace(ns).List(ctx, client.ListOptions{LabelSelector: api.JobNameLabel + "=short-lived"})
			if err != nil {
				return false, err
			}
			return len(l.Items) == 0, fmt.Errorf("%d pods", len(l.Items))
		})
	})

	t.Run("indexed", func(t *testing.T) {
		j := newJob("idx", 3, 2, 6)
		j.Spec.CompletionMode = new(api.IndexedCompletion)
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for len(seen) < 3 {
			var active []api.Pod
			cl.Eventually(30*time.Second, "indexed pods running", func() (bool, error) {
				active = activePods(t, cl, "idx")
				return len(active) == min(2, 3-len(seen)), fmt.Errorf("%d active", len(active))
			})
			p := active[0]
			idx := p.Annotations[api.JobCompletionIndexAnnotation]
			if idx == "" || p.Labels[api.JobCompletionIndexAnnotation] != idx || p.Spec.Hostname != "idx-"+idx || seen[idx] ||
				len(p.Spec.Containers[0].Env) != 1 || p.Spec.Containers[0].Env[0].Name != "JOB_COMPLETION_INDEX" {
				t.Fatalf("pod %s: annotations %v labels %v hostname %q env %+v", p.Name, p.Annotations, p.Labels, p.Spec.Hostname, p.Spec.Containers[0].Env)
			}
			seen[idx] = true
			cl.SetPodStatus(ns, p.Name, api.PodSucceeded, "", false)
		}
		cl.Eventually(30*time.Second, "indexed job complete", func() (bool, error) {
			j, err := jobs.Get(ctx, "idx")
			if err != nil {
				return false, err
			}
			return condition(j, api.JobComplete) != nil && j.Status.CompletedIndexes == "0-2" && j.Status.Succeeded == 3, fmt.Errorf("status %+v", j.Status)
		})
	})
}

// TestJobAdoptsAndReleases is the conformance spec "Job should adopt
// matching orphans and release non-matching pods": a pod whose
// ownerReferences are removed is adopted again, with the tracking
// finalizer, and no replacement is made for it; a pod whose labels no
// longer match is released, tracking finalizer removed.
func TestJobAdoptsAndReleases(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"job"}, nil)
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace(ns)
	jobs := client.Resource[api.Job](cl.Client).Namespace(ns)
	pods := client.Resource[api.Pod](cl.Client).Namespace(ns)
	job, err := jobs.Create(ctx, newJob("adopt-release", 4, 2, 6))
	if err != nil {
		t.Fatal(err)
	}
	var active []api.Pod
	cl.Eventually(30*time.Second, "2 active pods", func() (bool, error) {
		active = activePods(t, cl, "adopt-release")
		return len(active) == 2, fmt.Errorf("%d active", len(active))
	})
	name := active[0].Name
	controlledBy := func(p *api.Pod) bool {
		ref := api.GetControllerOf(&p.ObjectMeta)
		return ref != nil && ref.Kind == "Job" && ref.Name == job.Name && ref.UID == job.UID
	}
	hasFinalizer := func(p *api.Pod) bool { return slices.Contains(p.Finalizers, api.JobTrackingFinalizer) }

	// Orphaned (ownerReferences and the finalizer gone): adopted again.
	if _, err := pods.Patch(ctx, name, client.MergePatchType, []byte(`{"metadata":{"ownerReferences":null,"finalizers":null}}`)); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the orphan adopted with the tracking finalizer", func() (bool, error) {
		p, err := pods.Get(ctx, name)
		if err != nil {
			return false, err
		}
		return controlledBy(p) && hasFinalizer(p), fmt.Errorf("ownerReferences %+v, finalizers %v", p.OwnerReferences, p.Finalizers)
	})
	time.Sleep(time.Second)
	if n := len(activePods(t, cl, "adopt-release")); n != 2 {
		t.Errorf("%d active pods after the adoption, want 2 (no replacement for the adopted pod)", n)
	}

	// Labels removed: released.
	if _, err := pods.Patch(ctx, name, client.MergePatchType, []byte(`{"metadata":{"labels":null}}`)); err != nil {
		t.Fatal(err)
	}
	cl.Eventually(30*time.Second, "the pod released without the tracking finalizer", func() (bool, error) {
		p, err := pods.Get(ctx, name)
		if err != nil {
			return false, err
		}
		return api.GetControllerOf(&p.ObjectMeta) == nil && !hasFinalizer(p), fmt.Errorf("ownerReferences %+v, finalizers %v", p.OwnerReferences, p.Finalizers)
	})
}
