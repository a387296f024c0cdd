package job

import (
	"context"
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
		{name: "only the missing completions run", job: newJob(3, 3, 6), pods: []*api.Pod{jobPod("a", api.PodSucceeded), jobPod("b", api.PodSucceeded), jobPod("c", api.PodRunning)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b"},
			check: func(t *testing.T, st api.JobStatus) {
				if st.Active != 1 || st.Succeeded != 0 || len(st.UncountedTerminatedPods.Succeeded) != 2 {
					t.Fatalf("status = %+v", st)
				}
			}},
		// The success is recorded as uncounted, then the pod released; the
		// Complete condition waits for the sync that counts it.
		{name: "completes", job: newJob(1, 1, 6), pods: []*api.Pod{jobPod("a", api.PodSucceeded)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobSuccessCriteriaMet, "CompletionsReached") || hasCondition(st, api.JobComplete, "") || st.CompletionTime != nil ||
					len(st.UncountedTerminatedPods.Succeeded) != 1 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "completes once the success is counted", job: newJob(1, 1, 6), pods: []*api.Pod{jobPod("a", api.PodSucceeded)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a"},
			settled: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobComplete, "CompletionsReached") || st.CompletionTime == nil || st.Succeeded != 1 ||
					len(st.UncountedTerminatedPods.Succeeded) != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "fails once its failures are counted", job: newJob(1, 1, 1), pods: []*api.Pod{jobPod("a", api.PodFailed), jobPod("b", api.PodFailed)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b"},
			settled: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailed, api.JobReasonBackoffLimitExceeded) || st.Failed != 2 || len(st.UncountedTerminatedPods.Failed) != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "over the backoff limit fails", job: newJob(1, 1, 1), pods: []*api.Pod{jobPod("a", api.PodFailed), jobPod("b", api.PodFailed)},
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailureTarget, api.JobReasonBackoffLimitExceeded) || hasCondition(st, api.JobFailed, "") ||
					len(st.UncountedTerminatedPods.Failed) != 2 || st.CompletionTime != nil {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "failure within the limit waits for the back-off", job: newJob(1, 1, 3), pods: []*api.Pod{func() *api.Pod {
			p := jobPod("a", api.PodFailed)
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", State: api.ContainerState{Terminated: &api.ContainerStateTerminated{ExitCode: 1, FinishedAt: api.NewTime(t0.Add(-time.Second))}}}}
			return p
		}()}, wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a"},
			check: func(t *testing.T, st api.JobStatus) {
				if st.Active != 0 || len(st.UncountedTerminatedPods.Failed) != 1 {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "failure after the back-off is replaced", job: newJob(1, 1, 3), pods: []*api.Pod{jobPod("a", api.PodFailed)},
			wantWrites: []string{"create pods ns", "update jobs.batch ns/j/status", "patch pods ns/a"}, wantEvents: []string{"Normal SuccessfulCreate Created pod: j-"}},
		{name: "OnFailure restarts count against the backoff limit", job: func() *api.Job {
			j := newJob(1, 1, 2)
			j.Spec.Template.Spec.RestartPolicy = api.RestartPolicyOnFailure
			return j
		}(), pods: []*api.Pod{func() *api.Pod {
			p := jobPod("a", api.PodRunning)
			p.Spec.RestartPolicy = api.RestartPolicyOnFailure
			p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", RestartCount: 2}}
			return p
		}()}, wantWrites: []string{"delete pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulDelete Deleted pod: a"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailureTarget, api.JobReasonBackoffLimitExceeded) {
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
		{name: "suspended job stops its pods", job: func() *api.Job {
			j := newJob(1, 1, 6)
			j.Spec.Suspend = ptr(true)
			return j
		}(), pods: []*api.Pod{jobPod("a", api.PodRunning)},
			wantWrites: []string{"delete pods ns/a", "update jobs.batch ns/j/status"}, wantEvents: []string{"Normal SuccessfulDelete Deleted pod: a"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobSuspended, "JobSuspended") || st.Active != 0 || st.StartTime != nil {
					t.Fatalf("status = %+v", st)
				}
			}},
		{name: "indexed: the pending index runs, a duplicate goes", job: func() *api.Job {
			j := newJob(3, 3, 6)
			j.Spec.CompletionMode = ptr(api.IndexedCompletion)
			return j
		}(), pods: []*api.Pod{indexedPod("a", api.PodSucceeded, "0"), indexedPod("b", api.PodRunning, "2"), indexedPod("c", api.PodRunning, "2")},
			wantWrites: []string{"delete pods ns/c", "create pods ns", "update jobs.batch ns/j/status", "patch pods ns/a"},
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
			wantWrites: []string{"update jobs.batch ns/j/status", "patch pods ns/a"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobSuccessCriteriaMet, "CompletionsReached") || st.Succeeded != 2 || st.CompletedIndexes != "0-1" {
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
			wantWrites: []string{"create pods ns", "update jobs.batch ns/j/status", "patch pods ns/a", "patch pods ns/b"},
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
		{name: "deadline exceeded", job: func() *api.Job {
			j := newJob(1, 1, 6)
			j.Spec.ActiveDeadlineSeconds = ptr(int64(60))
			j.Status.StartTime = &started
			return j
		}(), pods: []*api.Pod{jobPod("a", api.PodRunning)},
			wantWrites: []string{"delete pods ns/a", "update jobs.batch ns/j/status"},
			wantEvents: []string{"Normal SuccessfulDelete Deleted pod: a"},
			check: func(t *testing.T, st api.JobStatus) {
				if !hasCondition(st, api.JobFailureTarget, api.JobReasonDeadlineExceeded) || st.Active != 0 {
					t.Fatalf("status = %+v", st)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, tt.job)
			var job api.Job
			srv.Object(jobInfo(), "ns", "j", &job)
			for _, p := range tt.pods {
				p = api.DeepCopy(p)
				p.OwnerReferences = []api.OwnerReference{controller.NewControllerRef(&job.ObjectMeta, "batch/v1", "Job")}
				if err := srv.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
			rec := &events.FakeRecorder{}
			c := NewController(srv.Client(), informer.Shared[api.Job](f, "", client.ListOptions{}), informer.Shared[api.Pod](f, "", client.ListOptions{}),
				controller.RealPodControl{Client: srv.Client(), Recorder: rec}, rec, slog.New(slog.DiscardHandler))
			c.now = func() time.Time { return t0 }
			f.Start(ctx)
			f.WaitForCacheSync(ctx)
			srv.ClearActions()
			if err := c.sync(ctx, "ns/j"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range srv.Actions() {
				if a.Verb != "watch" && a.Verb != "list" && a.Verb != "get" {
					got = append(got, a.String())
				}
			}
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
