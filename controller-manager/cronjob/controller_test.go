package cronjob

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

// TestSync runs one sync against a fake server on a fake clock and
// compares the writes and events with kube's.
func TestSync(t *testing.T) {
	type setup struct {
		cj        *api.CronJob
		activeJob bool          // an unfinished job of the last schedule time exists
		now       time.Duration // after the creation's minute
	}
	newCJ := func(mut func(*api.CronJob)) *api.CronJob {
		cj := &api.CronJob{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "cj"},
			Spec: api.CronJobSpec{Schedule: "* * * * *", ConcurrencyPolicy: api.AllowConcurrent,
				JobTemplate: api.JobTemplateSpec{Spec: api.JobSpec{Template: api.PodTemplateSpec{Spec: api.PodSpec{RestartPolicy: api.RestartPolicyNever,
					Containers: []api.Container{{Name: "c", Image: "i"}}}}}}}}
		if mut != nil {
			mut(cj)
		}
		return cj
	}
	tests := []struct {
		name       string
		setup      setup
		wantWrites []string
		wantEvents []string // %d is the new job's unix minute, %p the previous one's
	}{
		{name: "nothing due yet", setup: setup{cj: newCJ(nil), now: 30 * time.Second}},
		{name: "due: creates the job", setup: setup{cj: newCJ(nil), now: 61 * time.Second},
			wantWrites: []string{"create jobs.batch ns", "update cronjobs.batch ns/cj/status"}, wantEvents: []string{"Normal SuccessfulCreate Created job cj-%d"}},
		{name: "suspended", setup: setup{cj: newCJ(func(cj *api.CronJob) { cj.Spec.Suspend = new(true) }), now: 61 * time.Second}},
		{name: "allow runs alongside", setup: setup{cj: newCJ(nil), activeJob: true, now: 121 * time.Second},
			wantWrites: []string{"create jobs.batch ns", "update cronjobs.batch ns/cj/status"}, wantEvents: []string{"Normal SuccessfulCreate Created job cj-%d"}},
		{name: "forbid waits", setup: setup{cj: newCJ(func(cj *api.CronJob) { cj.Spec.ConcurrencyPolicy = api.ForbidConcurrent }), activeJob: true, now: 121 * time.Second},
			wantEvents: []string{"Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid"}},
		{name: "replace deletes the running job", setup: setup{cj: newCJ(func(cj *api.CronJob) { cj.Spec.ConcurrencyPolicy = api.ReplaceConcurrent }), activeJob: true, now: 121 * time.Second},
			wantWrites: []string{"delete jobs.batch ns/cj-%p", "create jobs.batch ns", "update cronjobs.batch ns/cj/status"},
			wantEvents: []string{"Normal SuccessfulDelete Deleted job cj-%p", "Normal SuccessfulCreate Created job cj-%d"}},
		{name: "too many missed", setup: setup{cj: newCJ(nil), now: 3 * time.Hour},
			wantWrites: []string{"create jobs.batch ns", "update cronjobs.batch ns/cj/status"},
			wantEvents: []string{"Warning TooManyMissedTimes too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew", "Normal SuccessfulCreate Created job cj-%d"}},
		{name: "unparseable schedule", setup: setup{cj: newCJ(func(cj *api.CronJob) { cj.Spec.Schedule = "every day" }), now: 61 * time.Second},
			wantEvents: []string{`Warning UnparseableSchedule unparseable schedule: "every day" : expected exactly 5 fields, found 2: [every day]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, tt.setup.cj)
			var cj api.CronJob
			srv.Object(client.Resource[api.CronJob](nil).Info(), "ns", "cj", &cj)
			base := cj.CreationTimestamp.Time.Truncate(time.Minute)
			prev := base.Add(time.Minute)
			if tt.setup.activeJob {
				j, err := newJob(&cj, prev)
				if err != nil {
					t.Fatal(err)
				}
				j.OwnerReferences = []api.OwnerReference{controller.NewControllerRef(&cj.ObjectMeta, "batch/v1", "CronJob")}
				if err := srv.Add(j); err != nil {
					t.Fatal(err)
				}
				var created api.Job
				srv.Object(client.Resource[api.Job](nil).Info(), "ns", j.Name, &created)
				cj.Status.Active = []api.ObjectReference{{Kind: "Job", APIVersion: "batch/v1", Namespace: "ns", Name: j.Name, UID: created.UID}}
				lst := api.NewTime(prev)
				cj.Status.LastScheduleTime = &lst
				if _, err := client.Resource[api.CronJob](srv.Client()).Namespace("ns").UpdateStatus(context.Background(), &cj); err != nil {
					t.Fatal(err)
				}
			}
			now := base.Add(tt.setup.now)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
			rec := &events.FakeRecorder{}
			c, err := NewController(srv.Client(), informer.Shared[api.CronJob](f, "", client.ListOptions{}), informer.Shared[api.Job](f, "", client.ListOptions{}), rec, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			c.now = func() time.Time { return now }
			f.Start(ctx)
			f.WaitForCacheSync(ctx)
			srv.ClearActions()
			if err := c.sync(ctx, "ns/cj"); err != nil {
				t.Fatal(err)
			}
			expand := func(s string) string {
				s = strings.ReplaceAll(s, "%d", fmt.Sprint(now.Truncate(time.Minute).Unix()/60))
				return strings.ReplaceAll(s, "%p", fmt.Sprint(prev.Unix()/60))
			}
			var got, want []string
			for _, a := range srv.Actions() {
				if a.Verb != "watch" && a.Verb != "list" && a.Verb != "get" {
					got = append(got, a.String())
				}
			}
			for _, w := range tt.wantWrites {
				want = append(want, expand(w))
			}
			if !slices.Equal(got, want) {
				t.Errorf("writes = %q, want %q", got, want)
			}
			want = nil
			for _, w := range tt.wantEvents {
				want = append(want, expand(w))
			}
			if !slices.Equal(rec.Events(), want) {
				t.Errorf("events = %q, want %q", rec.Events(), want)
			}
		})
	}
}

// TestSyncStaleCronJob: a sync that sees a job of the CronJob's missing
// from the active list of its cached copy reads the CronJob from the
// apiserver first; listed there (the status write of the sync that created
// it is not in the cache yet), the job is not "unexpected". Missing there
// too, it is, as kube words it.
func TestSyncStaleCronJob(t *testing.T) {
	for _, listed := range []bool{true, false} {
		t.Run(fmt.Sprintf("listed on the server %t", listed), func(t *testing.T) {
			srv := clienttest.NewServer(t, &api.CronJob{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "cj"},
				Spec: api.CronJobSpec{Schedule: "* * * * *", JobTemplate: api.JobTemplateSpec{Spec: api.JobSpec{Template: api.PodTemplateSpec{
					Spec: api.PodSpec{RestartPolicy: api.RestartPolicyNever, Containers: []api.Container{{Name: "c", Image: "i"}}}}}}}})
			var cj api.CronJob
			srv.Object(client.Resource[api.CronJob](nil).Info(), "ns", "cj", &cj)
			stale := api.DeepCopy(&cj)
			sched := cj.CreationTimestamp.Time.Truncate(time.Minute).Add(time.Minute)
			j, err := newJob(&cj, sched)
			if err != nil {
				t.Fatal(err)
			}
			j.OwnerReferences = []api.OwnerReference{controller.NewControllerRef(&cj.ObjectMeta, "batch/v1", "CronJob")}
			if err := srv.Add(j); err != nil {
				t.Fatal(err)
			}
			var created api.Job
			srv.Object(client.Resource[api.Job](nil).Info(), "ns", j.Name, &created)
			if listed {
				cj.Status.Active = []api.ObjectReference{{Kind: "Job", APIVersion: "batch/v1", Namespace: "ns", Name: j.Name, UID: created.UID}}
				lst := api.NewTime(sched)
				cj.Status.LastScheduleTime = &lst
				if _, err := client.Resource[api.CronJob](srv.Client()).Namespace("ns").UpdateStatus(context.Background(), &cj); err != nil {
					t.Fatal(err)
				}
			}
			rec := &events.FakeRecorder{}
			f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
			c, err := NewController(srv.Client(), informer.Shared[api.CronJob](f, "", client.ListOptions{}), informer.Shared[api.Job](f, "", client.ListOptions{}), rec, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			c.now = func() time.Time { return sched.Add(10 * time.Second) }
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := c.syncCronJob(ctx, stale, []*api.Job{&created}); err != nil {
				t.Fatal(err)
			}
			var want []string
			if !listed {
				want = []string{"Warning UnexpectedJob Saw a job that the controller did not create or forgot: " + j.Name}
			}
			if !slices.Equal(rec.Events(), want) {
				t.Errorf("events = %q, want %q", rec.Events(), want)
			}
			if listed && !inActive(stale, created.UID) {
				t.Errorf("after the sync the active list is %+v, want the server's", stale.Status.Active)
			}
		})
	}
}
