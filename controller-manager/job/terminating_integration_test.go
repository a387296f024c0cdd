package job_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// onNode is newJob with its pods bound to a node, so that deleting one is
// graceful: it stays, terminating, until its kubelet (the test) ends it.
func onNode(j *api.Job) *api.Job {
	j.Spec.Template.Spec.NodeName = "node-a"
	return j
}

// finishTerminating ends a deleted pod as its kubelet does: the container
// killed (exit 137, phase Failed), then the final deletion.
func finishTerminating(t *testing.T, cl *controllermanagertest.Cluster, name string) {
	t.Helper()
	ctx := cl.Context(10 * time.Second)
	pods := client.Resource[api.Pod](cl.Client).Namespace(ns)
	p, err := pods.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if p.DeletionTimestamp == nil {
		t.Fatalf("pod %s is not being deleted", name)
	}
	failPod(t, cl, *p, 137)
	if err := pods.Delete(ctx, name, &api.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
}

// stillTerminating checks, for a while, that the job keeps its interim
// condition, not the terminal one, with one pod terminating.
func stillTerminating(t *testing.T, cl *controllermanagertest.Cluster, name string, interim, final api.JobConditionType) {
	t.Helper()
	waitStatus(t, cl, name, fmt.Sprintf("%s with a pod terminating", interim), func(j *api.Job) bool {
		return condition(j, interim) != nil && j.Status.Terminating != nil && *j.Status.Terminating == 1
	})
	for range 4 {
		time.Sleep(500 * time.Millisecond)
		j, err := client.Resource[api.Job](cl.Client).Namespace(ns).Get(cl.Context(10*time.Second), name)
		if err != nil {
			t.Fatal(err)
		}
		if condition(j, final) != nil || j.Status.CompletionTime != nil || j.Status.Terminating == nil || *j.Status.Terminating != 1 {
			t.Fatalf("job %s finished while a pod is terminating: %+v", name, j.Status)
		}
	}
}

// TestTerminalConditionsWaitForTerminatingPods runs the job controller on
// a real apiserver, the test acting as the pods' kubelet: as in kube
// v1.37 (JobPodReplacementPolicy and JobManagedBy are GA there, so always
// on), a job that failed or met its success criteria first gets
// FailureTarget or SuccessCriteriaMet, and Failed or Complete (with
// completionTime) only once none of its pods is terminating;
// status.terminating counts them meanwhile.
func TestTerminalConditionsWaitForTerminatingPods(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"job"}, nil)
	ctx := cl.Context(3 * time.Minute)
	cl.Namespace(ns)
	jobs := client.Resource[api.Job](cl.Client).Namespace(ns)
	pods := client.Resource[api.Pod](cl.Client).Namespace(ns)

	t.Run("Failed waits for the pods it stopped", func(t *testing.T) {
		if _, err := jobs.Create(ctx, onNode(newJob("stop", 2, 2, 0))); err != nil {
			t.Fatal(err)
		}
		active := waitActive(t, cl, "stop", 2)
		// Over the backoff limit: the other pod is stopped, gracefully.
		failPod(t, cl, active[0], 1)
		stillTerminating(t, cl, "stop", api.JobFailureTarget, api.JobFailed)
		p, err := pods.Get(ctx, active[1].Name)
		if err != nil || p.DeletionTimestamp == nil {
			t.Fatalf("the running pod was not stopped: %v %+v", err, p)
		}
		finishTerminating(t, cl, active[1].Name)
		j := waitStatus(t, cl, "stop", "Failed once the pod ended", func(j *api.Job) bool { return condition(j, api.JobFailed) != nil })
		c := condition(j, api.JobFailed)
		if c.Reason != api.JobReasonBackoffLimitExceeded || *j.Status.Terminating != 0 || j.Status.Failed != 2 || j.Status.CompletionTime != nil ||
			!uncountedEmpty(j) || condition(j, api.JobFailureTarget) == nil {
			t.Errorf("final status %+v", j.Status)
		}
	})

	t.Run("Complete waits for a pod being deleted", func(t *testing.T) {
		// Any success completes it; podReplacementPolicy Failed keeps a
		// terminating pod in its place (no replacement).
		j := onNode(newJob("drain", 0, 2, 6))
		j.Spec.Completions = nil
		j.Spec.PodReplacementPolicy = new("Failed")
		if _, err := jobs.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		active := waitActive(t, cl, "drain", 2)
		if err := pods.Delete(ctx, active[1].Name, nil); err != nil {
			t.Fatal(err)
		}
		cl.SetPodStatus(ns, active[0].Name, api.PodSucceeded, "", false)
		stillTerminating(t, cl, "drain", api.JobSuccessCriteriaMet, api.JobComplete)
		finishTerminating(t, cl, active[1].Name)
		j = waitStatus(t, cl, "drain", "Complete once the pod ended", func(j *api.Job) bool { return condition(j, api.JobComplete) != nil })
		if *j.Status.Terminating != 0 || j.Status.Succeeded != 1 || j.Status.Failed != 0 || j.Status.CompletionTime == nil ||
			j.Status.CompletionTime.Before(condition(j, api.JobSuccessCriteriaMet).LastTransitionTime.Time) || !uncountedEmpty(j) {
			t.Errorf("final status %+v", j.Status)
		}
	})
}
