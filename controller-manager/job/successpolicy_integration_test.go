package job_test

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controllermanagertest"
	"github.com/minik8s/minik8s/internal/client"
)

// TestSuccessPolicyOnAPIServer runs the conformance spec "[sig-apps] Job
// with successPolicy succeededIndexes rule should succeeded even when
// some indexes remain pending" on a real apiserver, the test acting as
// the pods' kubelet: an Indexed job of 5 completions, 2 at a time, whose
// policy asks for index 0 only. Index 1 fails, index 0 succeeds: the job
// gets SuccessCriteriaMet (reason SuccessPolicy) while index 1's
// replacement may run, stops what runs, starts no other index, and ends
// Complete with the same reason, completedIndexes "0", nothing active,
// ready or terminating.
func TestSuccessPolicyOnAPIServer(t *testing.T) {
	cl := controllermanagertest.Start(t, []string{"job"}, nil)
	ctx := cl.Context(2 * time.Minute)
	cl.Namespace(ns)
	j := onNode(newJob("policy", 5, 2, 6))
	j.Spec.CompletionMode = new(api.IndexedCompletion)
	j.Spec.SuccessPolicy = &api.SuccessPolicy{Rules: []api.SuccessPolicyRule{{SucceededIndexes: new("0")}}}
	created, err := client.Resource[api.Job](cl.Client).Namespace(ns).Create(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	if sp := created.Spec.SuccessPolicy; sp == nil || len(sp.Rules) != 1 || *sp.Rules[0].SucceededIndexes != "0" {
		t.Fatalf("successPolicy stored as %+v", sp)
	}

	byIndex := map[string]api.Pod{}
	for _, p := range waitActive(t, cl, "policy", 2) {
		byIndex[p.Annotations[api.JobCompletionIndexAnnotation]] = p
	}
	if len(byIndex) != 2 || byIndex["0"].Name == "" || byIndex["1"].Name == "" {
		t.Fatalf("active pods by index: %v", byIndex)
	}
	failPod(t, cl, byIndex["1"], 1)
	cl.SetPodStatus(ns, byIndex["0"].Name, api.PodSucceeded, "", false)

	met := waitStatus(t, cl, "policy", "SuccessCriteriaMet", func(j *api.Job) bool { return condition(j, api.JobSuccessCriteriaMet) != nil })
	if c := condition(met, api.JobSuccessCriteriaMet); c.Reason != api.JobReasonSuccessPolicy || c.Message != "Matched rules at index 0" {
		t.Fatalf("SuccessCriteriaMet = %+v", c)
	}
	// The pods it stopped end as their kubelet ends them.
	for _, p := range jobPods(t, cl, "policy") {
		if p.DeletionTimestamp != nil && p.Status.Phase != api.PodFailed && p.Status.Phase != api.PodSucceeded {
			finishTerminating(t, cl, p.Name)
		}
	}
	done := waitStatus(t, cl, "policy", "Complete", func(j *api.Job) bool { return condition(j, api.JobComplete) != nil })
	st := done.Status
	if c := condition(done, api.JobComplete); c.Reason != api.JobReasonSuccessPolicy || c.Message != "Matched rules at index 0" ||
		st.CompletedIndexes != "0" || st.Succeeded != 1 || st.Active != 0 || st.Ready == nil || *st.Ready != 0 ||
		st.Terminating == nil || *st.Terminating != 0 || st.CompletionTime == nil || st.Failed < 1 {
		t.Fatalf("status = %+v", st)
	}
	for _, p := range jobPods(t, cl, "policy") {
		if ix := p.Annotations[api.JobCompletionIndexAnnotation]; ix != "0" && ix != "1" {
			t.Errorf("pod %s of index %s started after the policy was met", p.Name, ix)
		}
	}
}
