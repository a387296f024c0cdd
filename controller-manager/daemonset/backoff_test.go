package daemonset

import (
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/backoff"
	"github.com/minik8s/minik8s/internal/events"
)

// TestFailedPodBackoffFollowsSpecGeneration: the controller's own status
// write (observedGeneration 0 → 1) does not start the back-off over, a
// new spec generation does.
func TestFailedPodBackoffFollowsSpecGeneration(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	rec := &events.FakeRecorder{}
	dsc := &Controller{
		recorder:   rec,
		Loop:       controller.NewLoop(controller.LoopConfig[string]{Queue: "test"}),
		failedPods: backoff.New(failedPodBackoffInitial, failedPodBackoffMax, 0),
	}
	defer dsc.Queue.ShutDown()
	dsc.failedPods.Now = func() time.Time { return now }
	ds := &api.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "agent", UID: "u1", Generation: 1}}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "agent-a"}}

	if !dsc.failedPodMayGo(ds, "n1", pod) {
		t.Fatal("first failed pod kept, want it deleted at once")
	}
	seen := *ds
	seen.Status.ObservedGeneration = 1
	now = now.Add(50 * time.Millisecond)
	if dsc.failedPodMayGo(&seen, "n1", pod) {
		t.Fatal("second failure 50ms later deleted once the status write was seen, want the 1 s back-off")
	}
	now = now.Add(time.Second)
	if !dsc.failedPodMayGo(&seen, "n1", pod) {
		t.Fatal("failure after the back-off kept")
	}
	now = now.Add(100 * time.Millisecond)
	if dsc.failedPodMayGo(&seen, "n1", pod) {
		t.Fatal("failure inside the 2 s back-off deleted")
	}
	changed := seen
	changed.Generation = 2
	if !dsc.failedPodMayGo(&changed, "n1", pod) {
		t.Fatal("a new spec generation did not start the back-off over")
	}
	if got := len(rec.Events()); got != 3 {
		t.Errorf("%d events, want one FailedDaemonPod per deletion (3): %v", got, rec.Events())
	}
	for _, e := range rec.Events() {
		if !strings.HasPrefix(e, "Warning FailedDaemonPod Found failed daemon pod ns/agent-a on node n1") {
			t.Errorf("event %q", e)
		}
	}
}
