package job

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

func ptr[T any](v T) *T { return &v }

// t0 is "now" for the controller: an hour after the fake server stamps creations.
var t0 = time.Now().Add(time.Hour).Truncate(time.Second)

func newJob(completions, parallelism, backoff int32) *api.Job {
	return &api.Job{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "j"},
		Spec: api.JobSpec{Completions: &completions, Parallelism: &parallelism, BackoffLimit: &backoff,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"job": "j"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"job": "j"}},
				Spec: api.PodSpec{RestartPolicy: api.RestartPolicyNever, Containers: []api.Container{{Name: "c", Image: "i"}}}}}}
}

func jobPod(name string, phase api.PodPhase) *api.Pod {
	return &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"job": "j"}, CreationTimestamp: api.NewTime(t0.Add(-time.Minute)),
		Finalizers: []string{api.JobTrackingFinalizer}},
		Spec:   api.PodSpec{RestartPolicy: api.RestartPolicyNever, NodeName: "n1", Containers: []api.Container{{Name: "c", Image: "i"}}},
		Status: api.PodStatus{Phase: phase}}
}

func indexedPod(name string, phase api.PodPhase, index string) *api.Pod {
	p := jobPod(name, phase)
	p.Annotations = map[string]string{api.JobCompletionIndexAnnotation: index}
	return p
}

func TestIndexes(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""}, {"0", "0"}, {"0,1,2,4", "0-2,4"}, {"3-5,1", "1,3-5"}, {"7,9-12", "7"}, {"x,2", "2"},
	} {
		if got := formatIndexes(parseIndexes(tt.in, 8)); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
	job := newJob(3, 1, 6)
	tmpl := indexedTemplate(job, trackedTemplate(&job.Spec.Template), 2, indexFailures{})
	if tmpl.Annotations[api.JobCompletionIndexAnnotation] != "2" || tmpl.Labels[api.JobCompletionIndexAnnotation] != "2" || tmpl.Spec.Hostname != "j-2" ||
		tmpl.GenerateName != "j-2-" || !slices.Equal(tmpl.Finalizers, []string{api.JobTrackingFinalizer}) ||
		len(tmpl.Spec.Containers[0].Env) != 1 || tmpl.Spec.Containers[0].Env[0].Name != "JOB_COMPLETION_INDEX" ||
		tmpl.Spec.Containers[0].Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Fatalf("template %+v", tmpl)
	}
}

func TestSync(t *testing.T) {
	started := api.NewTime(t0.Add(-time.Hour))
	tests := []struct {
		name       string
		job        *api.Job
		pods       []*api.Pod
		wantWrites []string
		wantEvents []string
		check      func(t *testing.T, st api.JobStatus)
		// checkPods, when set, checks the pods after the sync.
		checkPods func(t *testing.T, pods []api.Pod)
		// settled, when set, checks the status once further syncs (each
		// after the informers caught up) change nothing more.
		settled func(t *testing.T, st api.JobStatus)
	}{
		{name: "starts parallel pods", job: newJob(3, 2, 6),
			wantWrites: []string{"create pods ns", "create pods ns", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulCreate Created pod: j-", "Normal SuccessfulCreate Created pod: j-"},
			check: func(t *testing.T, st api.JobStatus) {
				if st.Active != 2 || st.StartTime == nil {
					t.Fatalf("status = %+v", st)
				}
			}},
		// kube's order: the successes recorded as uncounted, the pods
		// released, then counted.
		{name: "only the missing completions run", job: newJob(3, 3, 6), pods: []*api.Pod{jobPod("a", api.PodSucceeded), jobPod("b", api.PodSucceeded), jobPod("c", api.PodRunning)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b", "update jobs.batch ns/j/status"},
			check: func(t *testing.T, st api.JobStatus) {
				if st.Active != 1 || st.Succeeded != 2 || len(st.UncountedTerminatedPods.Succeeded) != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
		// The success is recorded as uncounted with SuccessCriteriaMet, then
		// the pod released; counted, with no pod left terminating, the job
		// is Complete in the same sync.
		{name: "completes", job: newJob(1, 1, 6), pods: []*api.Pod{jobPod("a", api.PodSucceeded)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal Completed Job completed"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobSuccessCriteriaMet, "CompletionsReached") || !hasCondition(st, api.JobComplete, "CompletionsReached") || st.CompletionTime == nil ||
					!st.CompletionTime.Time.Equal(t0) || st.Succeeded != 1 || len(st.UncountedTerminatedPods.Succeeded) != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "completes once the success is counted", job: newJob(1, 1, 6), pods: []*api.Pod{jobPod("a", api.PodSucceeded)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal Completed Job completed"},
			settled: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobComplete, "CompletionsReached") || st.CompletionTime == nil || st.Succeeded != 1 ||
					len(st.UncountedTerminatedPods.Succeeded) != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "fails once its failures are counted", job: newJob(1, 1, 1), pods: []*api.Pod{jobPod("a", api.PodFailed), jobPod("b", api.PodFailed)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Warning BackoffLimitExceeded Job has reached the specified backoff limit"},
			settled: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailed, api.JobReasonBackoffLimitExceeded) || st.Failed != 2 || len(st.UncountedTerminatedPods.Failed) != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "over the backoff limit fails", job: newJob(1, 1, 1), pods: []*api.Pod{jobPod("a", api.PodFailed), jobPod("b", api.PodFailed)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Warning BackoffLimitExceeded Job has reached the specified backoff limit"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailureTarget, api.JobReasonBackoffLimitExceeded) || !hasCondition(st, api.JobFailed, api.JobReasonBackoffLimitExceeded) ||
					len(st.UncountedTerminatedPods.Failed) != 0 || st.Failed != 2 || st.CompletionTime != nil {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "failure within the limit waits for the back-off", job: newJob(1, 1, 3), pods: []*api.Pod{func() *api.Pod {
			p := jobPod("a", api.PodFailed)
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 1, FinishedAt: api.NewTime(t0.Add(-time.Second))}}}}
			return p
		}()}, wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "update jobs.batch ns/j/status"},
			check: func(t *testing.T, st api.JobStatus) {
				if st.Active != 0 || st.Failed != 1 || len(st.UncountedTerminatedPods.Failed) != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "failure after the back-off is replaced", job: newJob(1, 1, 3), pods: []*api.Pod{jobPod("a", api.PodFailed)},
			wantWrites: []string{"create pods ns", "update jobs.batch ns/j/status", "patch pods ns/a", "update jobs.batch ns/j/status"}, wantEvents: []string{"Normal SuccessfulCreate Created pod: j-"}},
		{name: "OnFailure restarts count against the backoff limit", job: func() *api.Job {
			j := newJob(1, 1, 2)
			j.Spec.Template.Spec.RestartPolicy = api.RestartPolicyOnFailure
			return j
		}(), pods: []*api.Pod{func() *api.Pod {
			p := jobPod("a", api.PodRunning)
			p.Spec.RestartPolicy = api.RestartPolicyOnFailure
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", RestartCount: 2}}
			return p
		}()}, wantWrites: []string{"delete pods ns/a", "update jobs.batch ns/j/status", "patch pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulDelete Deleted pod: a"},
			// The pod it stopped is terminating: Failed waits for it.
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailureTarget, api.JobReasonBackoffLimitExceeded) || hasCondition(st, api.JobFailed, "") || *st.Terminating != 1 || st.Failed != 1 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "OnFailure restarts under the limit keep it running", job: func() *api.Job {
			j := newJob(1, 1, 2)
			j.Spec.Template.Spec.RestartPolicy = api.RestartPolicyOnFailure
			return j
		}(), pods: []*api.Pod{func() *api.Pod {
			p := jobPod("a", api.PodRunning)
			p.Spec.RestartPolicy = api.RestartPolicyOnFailure
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", RestartCount: 1}}
			return p
		}()}, wantWrites: []string{"update jobs.batch ns/j/status"}},
		// Suspending a running job stops its pods and drops its start
		// time (MutableSchedulingDirectivesForSuspendedJobs, on in v1.37).
		{name: "suspended job stops its pods", job: func() *api.Job {
			j := newJob(1, 1, 6)
			j.Spec.Suspend = ptr(true)
			j.Status.StartTime = &started
			return j
		}(), pods: []*api.Pod{jobPod("a", api.PodRunning)},
			// Its pod is released first: it is not counted as failed.
			wantWrites: []string{"patch pods ns/a", "delete pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulDelete Deleted pod: a", "Normal Suspended Job suspended"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobSuspended, "JobSuspended") || st.Active != 0 || st.StartTime != nil || *st.Terminating != 1 {
					t.Fatalf("status = %+v", st)
				}
			}},
		// Resumed, it starts again now.
		{name: "resumed job starts over", job: func() *api.Job {
			j := newJob(1, 1, 6)
			j.Status.Conditions = []api.JobCondition{{Type: api.JobSuspended, Status: api.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended"}}
			return j
		}(),
			wantWrites: []string{"create pods ns", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulCreate Created pod: j-", "Normal Resumed Job resumed"},
			check: func(t *testing.T, st api.JobStatus) {
				c := st.Conditions[0]
				if c.Status != api.ConditionFalse || c.Reason != "JobResumed" || c.Message != "Job resumed" || !c.LastTransitionTime.Time.Equal(t0) ||
					st.StartTime == nil || !st.StartTime.Time.Equal(t0) || st.Active != 1 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "indexed: the pending index runs, a duplicate goes", job: func() *api.Job {
			j := newJob(3, 3, 6)
			j.Spec.CompletionMode = ptr(api.IndexedCompletion)
			return j
		}(), pods: []*api.Pod{indexedPod("a", api.PodSucceeded, "0"), indexedPod("b", api.PodRunning, "2"), indexedPod("c", api.PodRunning, "2")},
			wantWrites: []string{"patch pods ns/c", "delete pods ns/c", "create pods ns", "update jobs.batch ns/j/status", "patch pods ns/a"},
			wantEvents: []string{"Normal SuccessfulDelete Deleted pod: c", "Normal SuccessfulCreate Created pod: j-"},
			check: func(t *testing.T, st api.JobStatus) {
				if st.Active != 2 || st.Succeeded != 1 || st.CompletedIndexes != "0" || *st.Terminating != 1 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "indexed: complete when every index succeeded", job: func() *api.Job {
			j := newJob(2, 2, 6)
			j.Spec.CompletionMode = ptr(api.IndexedCompletion)
			j.Status.CompletedIndexes = "1"
			return j
		}(), pods: []*api.Pod{indexedPod("a", api.PodSucceeded, "0")},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal Completed Job completed"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobSuccessCriteriaMet, "CompletionsReached") || !hasCondition(st, api.JobComplete, "") || st.Succeeded != 2 || st.CompletedIndexes != "0-1" {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "per-index back-off: only the index whose back-off passed runs again", job: func() *api.Job {
			j := newJob(2, 2, 6)
			j.Spec.BackoffLimit = nil
			j.Spec.CompletionMode = ptr(api.IndexedCompletion)
			j.Spec.BackoffLimitPerIndex = ptr(int32(2))
			return j
		}(), pods: []*api.Pod{func() *api.Pod {
			p := indexedPod("a", api.PodFailed, "0")
			p.Annotations[api.JobIndexFailureCountAnnotation] = "0"
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 1, FinishedAt: api.NewTime(t0.Add(-time.Second))}}}}
			return p
		}(), func() *api.Pod {
			p := indexedPod("b", api.PodFailed, "1")
			p.Annotations[api.JobIndexFailureCountAnnotation] = "0"
			return p
		}()},
			// Both failed pods keep their finalizers until their indexes
			// have new pods: they hold the failure counts.
			wantWrites: []string{"create pods ns", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulCreate Created pod: j-"},
			checkPods: func(t *testing.T, pods []api.Pod) {
				var created []api.Pod
				for _, p := range pods {
					if p.Name != "a" && p.Name != "b" {
						created = append(created, p)
					}
				}
				if len(created) != 1 || created[0].Annotations[api.JobCompletionIndexAnnotation] != "1" ||
					created[0].Annotations[api.JobIndexFailureCountAnnotation] != "1" || !strings.HasPrefix(created[0].Name, "j-1-") {
					t.Fatalf("created %+v", created)
				}
			}},
		// Another controller's job: untouched, its pods too.
		{name: "managed by another controller", job: func() *api.Job {
			j := newJob(1, 1, 0)
			j.Spec.ManagedBy = ptr("example.com/batch")
			return j
		}(), pods: []*api.Pod{jobPod("a", api.PodFailed), jobPod("b", api.PodSucceeded)},
			check: func(t *testing.T, st api.JobStatus) {
				if st.StartTime != nil || len(st.Conditions) != 0 || st.UncountedTerminatedPods != nil {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "managed by the job controller by name", job: func() *api.Job {
			j := newJob(1, 1, 6)
			j.Spec.ManagedBy = ptr(JobControllerName)
			return j
		}(), wantWrites: []string{"create pods ns", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulCreate Created pod: j-"}},
		{name: "deadline exceeded", job: func() *api.Job {
			j := newJob(1, 1, 6)
			j.Spec.ActiveDeadlineSeconds = ptr(int64(60))
			j.Status.StartTime = &started
			return j
		}(), pods: []*api.Pod{jobPod("a", api.PodRunning)},
			wantWrites: []string{"delete pods ns/a", "update jobs.batch ns/j/status", "patch pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulDelete Deleted pod: a"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailureTarget, api.JobReasonDeadlineExceeded) || hasCondition(st, api.JobFailed, "") || st.Active != 0 || *st.Terminating != 1 {
					t.Fatalf("status = %+v", st)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, c, rec, ctx := startController(t, tt.job, tt.pods)
			var job api.Job
			if err := c.sync(ctx, "ns/j"); err != nil {
				t.Fatal(err)
			}
			got := writes(srv)
			if !slices.Equal(got, tt.wantWrites) {
				t.Fatalf("writes = %q, want %q", got, tt.wantWrites)
			}
			var evs []string
			for _, e := range rec.Events() {
				if i := len("Normal SuccessfulCreate Created pod: j-"); len(e) > i && e[:i] == "Normal SuccessfulCreate Created pod: j-" {
					e = e[:i] // generated suffix
				}
				evs = append(evs, e)
			}
			if !slices.Equal(evs, tt.wantEvents) {
				t.Fatalf("events = %q, want %q", evs, tt.wantEvents)
			}
			if tt.check != nil {
				srv.Object(jobInfo(), "ns", "j", &job)
				tt.check(t, job.Status)
			}
			if tt.checkPods != nil {
				l, err := client.Resource[api.Pod](srv.Client()).Namespace("ns").List(ctx, client.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				tt.checkPods(t, l.Items)
			}
			if tt.settled != nil {
				for range 5 {
					waitForInformers(t, srv, c)
					srv.ClearActions()
					if err := c.sync(ctx, "ns/j"); err != nil {
						t.Fatal(err)
					}
				}
				for _, a := range srv.Actions() {
					if a.Verb != "watch" && a.Verb != "list" && a.Verb != "get" {
						t.Fatalf("still writing after 5 syncs: %s", a)
					}
				}
				srv.Object(jobInfo(), "ns", "j", &job)
				tt.settled(t, job.Status)
			}
		})
	}
}

// startController serves job and its pods (owned by it) from a fake
// server to a controller on "now" t0, its informers synced, the server's
// actions cleared.
func startController(t *testing.T, job *api.Job, pods []*api.Pod) (*clienttest.Server, *Controller, *events.FakeRecorder, context.Context) {
	t.Helper()
	srv := clienttest.NewServer(t, job)
	var stored api.Job
	srv.Object(jobInfo(), "ns", "j", &stored)
	for _, p := range pods {
		p = api.DeepCopy(p)
		p.OwnerReferences = []api.OwnerReference{controller.NewControllerRef(&stored.ObjectMeta, "batch/v1", "Job")}
		if p.UID == "" {
			p.UID = api.UID("uid-" + p.Name)
		}
		if err := srv.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	rec := &events.FakeRecorder{}
	c := NewController(srv.Client(), informer.Shared[api.Job](f, "", client.ListOptions{}), informer.Shared[api.Pod](f, "", client.ListOptions{}),
		controller.RealPodControl{Client: srv.Client(), Recorder: rec}, rec, slog.New(slog.DiscardHandler))
	c.now = func() time.Time { return t0 }
	f.Start(ctx)
	f.WaitForCacheSync(ctx)
	srv.ClearActions()
	return srv, c, rec, ctx
}

// writes are the server's write actions, in order.
func writes(srv *clienttest.Server) []string {
	var got []string
	for _, a := range srv.Actions() {
		if a.Verb != "watch" && a.Verb != "list" && a.Verb != "get" {
			got = append(got, a.String())
		}
	}
	return got
}

func hasCondition(st api.JobStatus, t api.JobConditionType, reason string) bool {
	for _, c := range st.Conditions {
		if c.Type == t && c.Status == api.ConditionTrue && (reason == "" || c.Reason == reason) {
			return true
		}
	}
	return false
}

func jobInfo() api.ResourceInfo { return client.Resource[api.Job](nil).Info() }

// waitForInformers waits until the controller's caches hold the server's
// current job and pods.
func waitForInformers(t *testing.T, srv *clienttest.Server, c *Controller) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var job api.Job
		srv.Object(jobInfo(), "ns", "j", &job)
		cached, err := c.jobs.Lister().Namespace("ns").Get("j")
		synced := err == nil && cached.ResourceVersion == job.ResourceVersion
		pods, err := client.Resource[api.Pod](srv.Client()).Namespace("ns").List(context.Background(), client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		synced = synced && len(pods.Items) == len(c.pods.Lister().Namespace("ns").List(nil))
		for _, p := range pods.Items {
			cp, err := c.pods.Lister().Namespace("ns").Get(p.Name)
			synced = synced && err == nil && cp.ResourceVersion == p.ResourceVersion
		}
		if synced {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("informers did not catch up")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTerminalConditionWaitsForTerminatingPods: as kube v1.37's, a job that
// met its success criteria or failed gets Complete or Failed only once no
// pod of it is terminating (deleted, not finished); status.terminating
// counts them meanwhile.
func TestTerminalConditionWaitsForTerminatingPods(t *testing.T) {
	deleting := func(name string) *api.Pod {
		p := jobPod(name, api.PodRunning)
		p.DeletionTimestamp = ptr(api.NewTime(t0.Add(-time.Second)))
		p.DeletionGracePeriodSeconds = ptr(int64(30))
		// The fake server removes a deleted object as soon as it has no
		// finalizer: this one stands for the kubelet's grace period.
		p.Finalizers = append(p.Finalizers, "test/kubelet")
		return p
	}
	for _, tc := range []struct {
		name               string
		job                *api.Job
		pods               []*api.Pod
		interim, final     api.JobConditionType
		succeeded, failed  int32
		wantCompletionTime bool
	}{
		// One pod succeeded; the other was deleted while running (it
		// counts as failed) and is still shutting down.
		{name: "complete", job: newJob(1, 2, 6), pods: []*api.Pod{jobPod("a", api.PodSucceeded), deleting("b")},
			interim: api.JobSuccessCriteriaMet, final: api.JobComplete, succeeded: 1, failed: 1, wantCompletionTime: true},
		{name: "failed", job: newJob(2, 2, 0), pods: []*api.Pod{jobPod("a", api.PodFailed), deleting("b")},
			interim: api.JobFailureTarget, final: api.JobFailed, failed: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c, _, ctx := startController(t, tc.job, tc.pods)
			var job api.Job
			for range 3 {
				if err := c.sync(ctx, "ns/j"); err != nil {
					t.Fatal(err)
				}
				waitForInformers(t, srv, c)
			}
			srv.Object(jobInfo(), "ns", "j", &job)
			st := job.Status
			if !hasCondition(st, tc.interim, "") || hasCondition(st, tc.final, "") || st.CompletionTime != nil || st.Terminating == nil || *st.Terminating != 1 ||
				st.Succeeded != tc.succeeded || st.Failed != tc.failed {
				t.Fatalf("with a pod terminating: status %+v", st)
			}
			// The pod's kubelet finishes it: it is gone.
			pods := client.Resource[api.Pod](srv.Client()).Namespace("ns")
			b, err := pods.Get(ctx, "b")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(b.Finalizers, []string{"test/kubelet"}) {
				t.Fatalf("terminating pod's finalizers %v, want the tracking one removed", b.Finalizers)
			}
			b.Finalizers = nil
			if _, err := pods.Update(ctx, b); err != nil {
				t.Fatal(err)
			}
			waitForInformers(t, srv, c)
			if err := c.sync(ctx, "ns/j"); err != nil {
				t.Fatal(err)
			}
			srv.Object(jobInfo(), "ns", "j", &job)
			st = job.Status
			if !hasCondition(st, tc.final, "") || *st.Terminating != 0 || (st.CompletionTime != nil) != tc.wantCompletionTime ||
				st.Succeeded != tc.succeeded || st.Failed != tc.failed {
				t.Fatalf("once no pod is terminating: status %+v", st)
			}
		})
	}
}

// TestUncountedCap: one sync adds at most MaxUncountedPods finished pods to
// uncountedTerminatedPods and releases only those, in kube's order (status
// with the UIDs, finalizers, status with the counts); the next sync takes
// the rest.
func TestUncountedCap(t *testing.T) {
	const finished = MaxUncountedPods + 40
	var pods []*api.Pod
	for i := range finished {
		pods = append(pods, jobPod(fmt.Sprintf("p%04d", i), api.PodSucceeded))
	}
	srv, c, _, ctx := startController(t, newJob(2*finished, 1, 6), pods)
	var job api.Job
	for sync, want := range []int{MaxUncountedPods, finished - MaxUncountedPods} {
		srv.ClearActions()
		if err := c.sync(ctx, "ns/j"); err != nil {
			t.Fatal(err)
		}
		got := writes(srv)
		var patches []string
		var rest []string
		for _, w := range got {
			if strings.HasPrefix(w, "patch pods ") {
				patches = append(patches, w)
			} else {
				rest = append(rest, w)
			}
		}
		// The status write with the UIDs comes before every patch, the
		// counted one after.
		first := slices.Index(got, "update jobs.batch ns/j/status")
		last := len(got) - 1
		if len(patches) != want || first < 0 || got[last] != "update jobs.batch ns/j/status" || first > slices.Index(got, patches[0]) {
			t.Fatalf("sync %d: %d patches, writes %q", sync, len(patches), rest)
		}
		srv.Object(jobInfo(), "ns", "j", &job)
		if counted := int32(MaxUncountedPods + sync*(finished-MaxUncountedPods)); job.Status.Succeeded != counted || !uncountedEmpty(job.Status) {
			t.Fatalf("sync %d: succeeded %d, want %d; uncounted %+v", sync, job.Status.Succeeded, counted, job.Status.UncountedTerminatedPods)
		}
		waitForInformers(t, srv, c)
	}
}

func uncountedEmpty(st api.JobStatus) bool {
	u := st.UncountedTerminatedPods
	return u == nil || len(u.Succeeded)+len(u.Failed) == 0
}
