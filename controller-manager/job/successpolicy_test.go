package job

import (
	"slices"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestMatchSuccessPolicy(t *testing.T) {
	t.Parallel()
	rule := func(indexes string, count int32) api.SuccessPolicyRule {
		var r api.SuccessPolicyRule
		if indexes != "" {
			r.SucceededIndexes = &indexes
		}
		if count > 0 {
			r.SucceededCount = &count
		}
		return r
	}
	for _, tc := range []struct {
		name  string
		rules []api.SuccessPolicyRule
		done  string
		want  string // "" when not met
	}{
		{"no success yet", []api.SuccessPolicyRule{rule("", 1)}, "", ""},
		{"count met", []api.SuccessPolicyRule{rule("", 2)}, "1,3", "Matched rules at index 0"},
		{"count not met", []api.SuccessPolicyRule{rule("", 3)}, "1,3", ""},
		{"indexes all succeeded", []api.SuccessPolicyRule{rule("0,2-3", 0)}, "0-3", "Matched rules at index 0"},
		{"indexes missing one", []api.SuccessPolicyRule{rule("0,2-3", 0)}, "0,2", ""},
		{"count of the indexes", []api.SuccessPolicyRule{rule("0,2-4", 2)}, "1,3-4", "Matched rules at index 0"},
		{"count counts only the indexes named", []api.SuccessPolicyRule{rule("0-1", 2)}, "1-4", ""},
		{"second rule met", []api.SuccessPolicyRule{rule("4", 0), rule("", 2)}, "0-1", "Matched rules at index 1"},
		{"first rule wins", []api.SuccessPolicyRule{rule("0", 0), rule("", 1)}, "0", "Matched rules at index 0"},
		// Indexes beyond completions (5) name nothing: never met.
		{"indexes beyond completions", []api.SuccessPolicyRule{rule("7-9", 0)}, "0-4", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, met := matchSuccessPolicy(&api.SuccessPolicy{Rules: tc.rules}, 5, parseIndexes(tc.done, 5))
			if got != tc.want || met != (tc.want != "") {
				t.Errorf("got %q %v, want %q", got, met, tc.want)
			}
		})
	}
	if _, met := matchSuccessPolicy(nil, 5, parseIndexes("0-4", 5)); met {
		t.Error("no policy met")
	}
}

// successPolicyJob is an Indexed job of 5 completions, 2 at a time, with
// rules.
func successPolicyJob(rules ...api.SuccessPolicyRule) *api.Job {
	j := newJob(5, 2, 6)
	j.Spec.CompletionMode = ptr(api.IndexedCompletion)
	j.Spec.SuccessPolicy = &api.SuccessPolicy{Rules: rules}
	return j
}

// TestSuccessPolicy: a job meeting a rule of its success policy gets
// SuccessCriteriaMet (reason SuccessPolicy, "Matched rules at index N")
// at once, stops its remaining pods without counting them as failures,
// starts no pending index, and is Complete with the same reason and
// message once its stopped pods are gone.
func TestSuccessPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		job        *api.Job
		pods       []*api.Pod
		wantWrites []string
		// completed is the completedIndexes the job ends with;
		// message its conditions' message ("" when the policy is not
		// met: the job goes on).
		completed, message string
	}{
		{name: "succeededIndexes met, a pending index left",
			job:  successPolicyJob(api.SuccessPolicyRule{SucceededIndexes: ptr("0")}),
			pods: []*api.Pod{indexedPod("a", api.PodSucceeded, "0"), indexedPod("b", api.PodRunning, "1")},
			// The running pod stopped, the interim condition written with
			// the success, both pods released.
			wantWrites: []string{"delete pods ns/b", "update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b"},
			completed:  "0", message: "Matched rules at index 0"},
		{name: "succeededCount met by another index than the first",
			job:        successPolicyJob(api.SuccessPolicyRule{SucceededIndexes: ptr("3")}, api.SuccessPolicyRule{SucceededCount: ptr(int32(1))}),
			pods:       []*api.Pod{indexedPod("a", api.PodFailed, "0"), indexedPod("b", api.PodSucceeded, "1")},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b", "update jobs.batch ns/j/status"},
			completed:  "1", message: "Matched rules at index 1"},
		{name: "every index succeeded: the policy's reason still",
			job: func() *api.Job {
				j := newJob(2, 2, 6)
				j.Spec.CompletionMode = ptr(api.IndexedCompletion)
				j.Spec.SuccessPolicy = &api.SuccessPolicy{Rules: []api.SuccessPolicyRule{{SucceededCount: ptr(int32(2))}}}
				return j
			}(),
			pods:       []*api.Pod{indexedPod("a", api.PodSucceeded, "0"), indexedPod("b", api.PodSucceeded, "1")},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b", "update jobs.batch ns/j/status"},
			completed:  "0-1", message: "Matched rules at index 0"},
		{name: "not met: the job goes on",
			job:  successPolicyJob(api.SuccessPolicyRule{SucceededIndexes: ptr("0-1")}),
			pods: []*api.Pod{indexedPod("a", api.PodSucceeded, "0")},
			// Two pods for the lowest pending indexes.
			wantWrites: []string{"create pods ns", "create pods ns", "update jobs.batch ns/j/status", "patch pods ns/a"},
			completed:  "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, c, rec, ctx := startController(t, tc.job, tc.pods)
			if err := c.sync(ctx, "ns/j"); err != nil {
				t.Fatal(err)
			}
			if got := writes(srv); !slices.Equal(got, tc.wantWrites) {
				t.Fatalf("writes = %q, want %q", got, tc.wantWrites)
			}
			var job api.Job
			srv.Object(jobInfo(), "ns", "j", &job)
			met := conditionOf(&job.Status, api.JobSuccessCriteriaMet)
			if tc.message == "" {
				if met != nil || len(job.Status.Conditions) != 0 || job.Status.Active != 2 {
					t.Fatalf("status = %+v", job.Status)
				}
				return
			}
			if met == nil || met.Reason != api.JobReasonSuccessPolicy || met.Message != tc.message {
				t.Fatalf("SuccessCriteriaMet = %+v, want reason SuccessPolicy, message %q", met, tc.message)
			}
			// The next syncs see the stopped pod gone: Complete.
			for range 3 {
				waitForInformers(t, srv, c)
				if err := c.sync(ctx, "ns/j"); err != nil {
					t.Fatal(err)
				}
			}
			srv.Object(jobInfo(), "ns", "j", &job)
			st := job.Status
			done := conditionOf(&st, api.JobComplete)
			if done == nil || done.Reason != api.JobReasonSuccessPolicy || done.Message != tc.message || st.CompletionTime == nil ||
				st.CompletedIndexes != tc.completed || st.Active != 0 || *st.Ready != 0 || *st.Terminating != 0 || !uncountedEmpty(st) {
				t.Fatalf("status = %+v", st)
			}
			// The pods it stopped are not failures; the one that failed
			// on its own is.
			wantFailed := int32(0)
			for _, p := range tc.pods {
				if p.Status.Phase == api.PodFailed {
					wantFailed++
				}
			}
			if st.Failed != wantFailed {
				t.Fatalf("failed = %d, want %d", st.Failed, wantFailed)
			}
			if evs := rec.Events(); !slices.Contains(evs, "Normal Completed Job completed") {
				t.Fatalf("events = %q", evs)
			}
		})
	}
}
