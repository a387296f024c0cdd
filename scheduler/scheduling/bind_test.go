package scheduling

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

// A binding the apiserver refuses because the pod is bound already (409) or
// gone (404) is dropped: no retry, no FailedScheduling, the pod leaves the
// queue and the assumed pod is forgotten. The scheduler here has a stale
// view (its queue still holds the pod unbound), as after a race with
// another scheduler.
func TestRefusedBindingIsDropped(t *testing.T) {
	srv := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: srv.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods := client.Resource[api.Pod](c).Namespace("default")
	for i, tc := range []struct {
		name string
		race func(t *testing.T, name string) // what happened behind the scheduler's back
		node string                          // where the pod must end up ("" when deleted)
	}{
		{"bound by another scheduler", func(t *testing.T, name string) {
			b := &api.Binding{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"}, Target: api.ObjectReference{Kind: "Node", Name: "elsewhere"}}
			if err := pods.Subresource(name, "binding").Post(ctx, b, nil); err != nil {
				t.Fatal(err)
			}
		}, "elsewhere"},
		{"deleted", func(t *testing.T, name string) {
			zero := int64(0)
			if err := pods.Delete(ctx, name, &api.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := schedtest.Pod("default", fmt.Sprintf("p-%d", i), "100m", "")
			p.UID = ""
			created, err := pods.Create(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			tc.race(t, created.Name)

			rec := &events.FakeRecorder{}
			s, err := New(Config{Client: c, Recorder: rec, Logger: slog.New(slog.DiscardHandler), PodInitialBackoff: 10 * time.Millisecond, PodMaxBackoff: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			s.Cache.AddNode(schedtest.Node("n1", "4", "8Gi", 110))
			s.Queue.Add(created) // the stale, unbound pod
			if err := s.scheduleOne(ctx); err != nil {
				t.Fatal(err)
			}
			s.background.Wait()

			if got := s.Stats.BindConflicts.Load(); got != 1 || s.Stats.Scheduled.Load() != 0 || s.Stats.Errors.Load() != 0 {
				t.Errorf("conflicts=%d scheduled=%d errors=%d, want one refused binding only", got, s.Stats.Scheduled.Load(), s.Stats.Errors.Load())
			}
			if a, b, u := s.Queue.Lens(); a+b+u != 0 {
				t.Errorf("pod requeued: active=%d backoff=%d unschedulable=%d", a, b, u)
			}
			assumed := *created
			assumed.Spec.NodeName = "n1"
			if s.Cache.IsAssumed(&assumed) || s.Cache.PodCount() != 0 {
				t.Errorf("assumed pod kept in the cache (%d pods)", s.Cache.PodCount())
			}
			if evs := rec.Events(); len(evs) != 0 {
				t.Errorf("events recorded for a dropped binding: %q", evs)
			}
			got, err := pods.Get(ctx, created.Name)
			switch {
			case tc.node == "" && err == nil:
				t.Errorf("deleted pod is back: %+v", got.Spec)
			case tc.node != "" && (err != nil || got.Spec.NodeName != tc.node):
				t.Errorf("pod = %v, %v; want it left on %s", got, err, tc.node)
			}
		})
	}
}
