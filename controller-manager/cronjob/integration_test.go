package cronjob

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// TestCronJobAgainstAPIServer runs the controller against a real
// apiserver on a clock the test moves a minute at a time: a per-minute
// schedule creates NAME-<unix minutes> with the scheduled-timestamp
// annotation; Forbid holds the next run back while one is active; a
// completed job leaves the active list and sets lastSuccessfulTime; the
// history limit deletes the older successful job.
func TestCronJobAgainstAPIServer(t *testing.T) {
	srv := apiservertest.Start(t)
	cl, err := client.New(&client.Config{Host: srv.URL(), QPS: -1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	const ns = "cron"
	if _, err := client.Resource[api.Namespace](cl).Create(ctx, &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	cj, err := client.Resource[api.CronJob](cl).Namespace(ns).Create(ctx, &api.CronJob{ObjectMeta: api.ObjectMeta{Namespace: ns, Name: "tick"},
		Spec: api.CronJobSpec{Schedule: "* * * * *", ConcurrencyPolicy: api.ForbidConcurrent, SuccessfulJobsHistoryLimit: &one,
			JobTemplate: api.JobTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"cron": "tick"}},
				Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{RestartPolicy: api.RestartPolicyNever,
					Containers: []api.Container{{Name: "c", Image: "busybox", Command: []string{"date"}}}}}}}}})
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	clock := cj.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute + time.Second)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	f := informer.NewFactory(cl, informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	rec := &events.FakeRecorder{}
	c, err := NewController(cl, informer.Shared[api.CronJob](f, "", client.ListOptions{}), informer.Shared[api.Job](f, "", client.ListOptions{}), rec, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c.now = now
	f.Start(ctx)
	go c.Run(ctx, 1)
	tick := func() {
		mu.Lock()
		clock = clock.Add(time.Minute)
		mu.Unlock()
		c.Add(ns + "/tick")
	}
	eventually := func(what string, cond func() (bool, error)) {
		t.Helper()
		var last error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			ok, err := cond()
			if ok {
				return
			}
			last = err
		}
		t.Fatalf("timed out waiting for %s: %v", what, last)
	}
	jobs := client.Resource[api.Job](cl).Namespace(ns)
	cronJobs := client.Resource[api.CronJob](cl).Namespace(ns)
	jobNames := func() []string {
		l, err := jobs.List(ctx, client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range l.Items {
			out = append(out, j.Name)
		}
		slices.Sort(out)
		return out
	}
	complete := func(name string) {
		j, err := jobs.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		tm := api.NewTime(now())
		j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &tm, &tm, 1
		j.Status.Conditions = []api.JobCondition{{Type: api.JobSuccessCriteriaMet, Status: api.ConditionTrue, LastTransitionTime: tm},
			{Type: api.JobComplete, Status: api.ConditionTrue, LastTransitionTime: tm}}
		if _, err := jobs.UpdateStatus(ctx, j); err != nil {
			t.Fatal(err)
		}
	}

	first := clock.Truncate(time.Minute)
	firstName := fmt.Sprintf("tick-%d", first.Unix()/60)
	eventually("the first job", func() (bool, error) {
		cj, err := cronJobs.Get(ctx, "tick")
		if err != nil {
			return false, err
		}
		return len(cj.Status.Active) == 1 && cj.Status.Active[0].Name == firstName && cj.Status.LastScheduleTime != nil &&
			cj.Status.LastScheduleTime.Equal(first), fmt.Errorf("status %+v, jobs %v", cj.Status, jobNames())
	})
	j, err := jobs.Get(ctx, firstName)
	if err != nil {
		t.Fatal(err)
	}
	if j.Annotations[ScheduledTimestampAnnotation] != first.Local().Format(time.RFC3339) || j.Labels["cron"] != "tick" ||
		len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != "CronJob" || j.OwnerReferences[0].UID != cj.UID {
		t.Fatalf("job meta %+v", j.ObjectMeta)
	}

	// Forbid: the next minute's run waits for the active job.
	tick()
	eventually("JobAlreadyActive", func() (bool, error) {
		return slices.Contains(rec.Events(), "Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid"), fmt.Errorf("events %q", rec.Events())
	})
	if n := jobNames(); len(n) != 1 {
		t.Fatalf("jobs while forbidden: %v", n)
	}

	// Completing it frees the schedule: the missed minute runs at once.
	complete(firstName)
	second := clock.Truncate(time.Minute)
	secondName := fmt.Sprintf("tick-%d", second.Unix()/60)
	eventually("the second job", func() (bool, error) {
		cj, err := cronJobs.Get(ctx, "tick")
		if err != nil {
			return false, err
		}
		return len(cj.Status.Active) == 1 && cj.Status.Active[0].Name == secondName && cj.Status.LastSuccessfulTime != nil,
			fmt.Errorf("status %+v", cj.Status)
	})
	// Its completion leaves one successful job: the first is deleted.
	complete(secondName)
	eventually("history limit", func() (bool, error) {
		n := jobNames()
		return slices.Equal(n, []string{secondName}), fmt.Errorf("jobs %v", n)
	})
	var reasons []string
	for _, e := range rec.Events() {
		reasons = append(reasons, strings.SplitN(e, " ", 3)[1])
	}
	for _, want := range []string{"SuccessfulCreate", "SawCompletedJob", "SuccessfulDelete"} {
		if !slices.Contains(reasons, want) {
			t.Errorf("no %s event in %q", want, rec.Events())
		}
	}
	if want := "Normal SawCompletedJob Saw completed job: " + firstName + ", condition: Complete"; !slices.Contains(rec.Events(), want) {
		t.Errorf("no %q in %q", want, rec.Events())
	}
}
