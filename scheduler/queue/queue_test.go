package queue

import (
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time         { return c.t }
func (c *clock) step(d time.Duration)   { c.t = c.t.Add(d) }
func newQueue(c *clock) *PriorityQueue  { return New(Options{Now: c.now}) }
func prio(p *api.Pod, v int32) *api.Pod { p.Spec.Priority = &v; return p }

func pop(t *testing.T, q *PriorityQueue) *QueuedPodInfo {
	t.Helper()
	if a, _, _ := q.Lens(); a == 0 {
		t.Fatal("active queue empty")
	}
	p, err := q.Pop()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPopOrder(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	q := newQueue(c)
	q.Add(schedtest.Pod("ns", "old-low", "", ""))
	c.step(time.Second)
	q.Add(prio(schedtest.Pod("ns", "high", "", ""), 100))
	c.step(time.Second)
	q.Add(schedtest.Pod("ns", "new-low", "", ""))
	c.step(time.Second)
	q.Add(prio(schedtest.Pod("ns", "higher-later", "", ""), 1000))
	var got []string
	for range 4 {
		got = append(got, pop(t, q).Pod.Name)
	}
	want := []string{"higher-later", "high", "old-low", "new-low"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestBackoffDuration(t *testing.T) {
	q := New(Options{})
	cases := []struct {
		attempts int
		want     time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {4, 8 * time.Second}, {5, 10 * time.Second}, {40, 10 * time.Second}}
	for _, tc := range cases {
		if got := q.BackoffDuration(tc.attempts); got != tc.want {
			t.Errorf("attempts %d: %v, want %v", tc.attempts, got, tc.want)
		}
	}
}

func TestUnschedulableMovesOnEvent(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	q := newQueue(c)
	q.Add(schedtest.Pod("ns", "p", "", ""))
	p := pop(t, q)
	q.AddUnschedulableIfNotPresent(p, true, q.SchedulingCycle())
	if a, b, u := q.Lens(); a != 0 || b != 0 || u != 1 {
		t.Fatalf("lens %d %d %d, want 0 0 1", a, b, u)
	}
	// An event during back-off moves it to backoffQ, and the flush after
	// the back-off to active.
	q.MoveAllToActiveOrBackoffQueue()
	if _, b, _ := q.Lens(); b != 1 {
		t.Fatal("not in backoffQ")
	}
	q.FlushBackoffQCompleted()
	if a, _, _ := q.Lens(); a != 0 {
		t.Fatal("left backoffQ before its back-off ended")
	}
	c.step(1100 * time.Millisecond)
	q.FlushBackoffQCompleted()
	if got := pop(t, q); got.Pod.Name != "p" || got.Attempts != 2 {
		t.Fatalf("popped %s attempts %d", got.Pod.Name, got.Attempts)
	}
	// After the back-off, an event moves it straight to active.
	q.AddUnschedulableIfNotPresent(p, true, q.SchedulingCycle())
	c.step(3 * time.Second)
	q.MoveAllToActiveOrBackoffQueue()
	if a, _, _ := q.Lens(); a != 1 {
		t.Fatal("not moved to active")
	}
}

func TestEventDuringAttemptSendsToBackoff(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	q := newQueue(c)
	q.Add(schedtest.Pod("ns", "p", "", ""))
	p := pop(t, q)
	cycle := q.SchedulingCycle()
	q.MoveAllToActiveOrBackoffQueue() // a node appeared while p was being scheduled
	q.AddUnschedulableIfNotPresent(p, true, cycle)
	if _, b, u := q.Lens(); b != 1 || u != 0 {
		t.Fatalf("backoff %d unschedulable %d: the event was lost", b, u)
	}
}

func TestErrorsGoToBackoff(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	q := newQueue(c)
	q.Add(schedtest.Pod("ns", "p", "", ""))
	p := pop(t, q)
	q.AddUnschedulableIfNotPresent(p, false, q.SchedulingCycle())
	if _, b, _ := q.Lens(); b != 1 {
		t.Fatal("errored pod not in backoffQ")
	}
}

func TestLeftoverFlush(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	q := newQueue(c)
	q.Add(schedtest.Pod("ns", "p", "", ""))
	q.AddUnschedulableIfNotPresent(pop(t, q), true, q.SchedulingCycle())
	c.step(4 * time.Minute)
	q.FlushUnschedulableLeftover()
	if _, _, u := q.Lens(); u != 1 {
		t.Fatal("flushed before five minutes")
	}
	c.step(2 * time.Minute)
	q.FlushUnschedulableLeftover()
	if a, _, u := q.Lens(); a != 1 || u != 0 {
		t.Fatal("not flushed after five minutes")
	}
}

func TestUpdateAndDelete(t *testing.T) {
	c := &clock{time.Unix(1000, 0)}
	q := newQueue(c)
	old := schedtest.Pod("ns", "p", "", "")
	q.Add(old)
	p := pop(t, q)
	q.AddUnschedulableIfNotPresent(p, true, q.SchedulingCycle())
	// A status-only update leaves it unschedulable.
	statusOnly := *old
	statusOnly.Status.Conditions = []api.PodCondition{{Type: api.PodScheduled, Status: api.ConditionFalse}}
	q.Update(old, &statusOnly)
	if _, _, u := q.Lens(); u != 1 {
		t.Fatal("status update moved the pod")
	}
	// A spec change may make it fit: it moves (to backoff while backing off).
	changed := statusOnly
	changed.Spec.NodeSelector = map[string]string{"a": "b"}
	q.Update(&statusOnly, &changed)
	if _, b, u := q.Lens(); b != 1 || u != 0 {
		t.Fatalf("spec update: backoff %d unschedulable %d", b, u)
	}
	q.Delete(&changed)
	if a, b, u := q.Lens(); a+b+u != 0 || q.Has(&changed) {
		t.Fatal("pod still queued after Delete")
	}
	// Update of an unknown pod adds it.
	q.Update(old, old)
	if a, _, _ := q.Lens(); a != 1 {
		t.Fatal("update of an unknown pod did not add it")
	}
}

func TestCloseWakesPop(t *testing.T) {
	q := New(Options{})
	done := make(chan error)
	go func() { _, err := q.Pop(); done <- err }()
	time.Sleep(10 * time.Millisecond)
	q.Close()
	select {
	case err := <-done:
		if err != ErrClosed {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Pop did not return after Close")
	}
}
