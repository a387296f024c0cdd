package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// fixture is a controller whose caches are seeded by hand (its informers
// never run), over a clienttest server that records what it does.
type fixture struct {
	t   *testing.T
	srv *clienttest.Server
	rsc *Controller
	rec *events.FakeRecorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := clienttest.NewServer(t)
	c := srv.Client()
	rec := &events.FakeRecorder{}
	f := informer.NewFactory(c, informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	rsc, err := NewController(c, f, controller.RealPodControl{Client: c, Recorder: rec}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, srv: srv, rsc: rsc, rec: rec}
}

// seed stores obj in the server and the controller's cache, as created.
func (f *fixture) seed(objs ...api.Object) {
	f.t.Helper()
	for _, obj := range objs {
		if err := f.srv.Add(obj); err != nil {
			f.t.Fatal(err)
		}
		m := obj.GetObjectMeta()
		switch o := obj.(type) {
		case *api.Pod:
			var got api.Pod
			f.srv.Object(resourceInfo("pods"), m.Namespace, m.Name, &got)
			got.Status = o.Status
			f.rsc.pods.Store().Add(&got)
		case *api.ReplicaSet:
			var got api.ReplicaSet
			f.srv.Object(resourceInfo("replicasets"), m.Namespace, m.Name, &got)
			got.Status = o.Status
			f.rsc.rss.Store().Add(&got)
		}
	}
}

func (f *fixture) cached(name string) *api.ReplicaSet {
	rs, err := f.rsc.rss.Lister().Namespace("ns").Get(name)
	if err != nil {
		f.t.Fatal(err)
	}
	return rs
}

func (f *fixture) sync(name string) error {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f.rsc.sync(ctx, "ns/"+name)
}

// actions are the recorded writes, "verb resource name[/sub]".
func (f *fixture) actions() []string {
	var out []string
	for _, a := range f.srv.Actions() {
		if a.Verb == "list" || a.Verb == "watch" || a.Verb == "get" {
			continue
		}
		out = append(out, a.String())
	}
	return out
}

func count(actions []string, prefix string) int {
	n := 0
	for _, a := range actions {
		if strings.HasPrefix(a, prefix) {
			n++
		}
	}
	return n
}

func ptr[T any](v T) *T { return &v }

func newRS(name string, replicas int32) *api.ReplicaSet {
	return &api.ReplicaSet{
		TypeMeta:   api.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", UID: api.UID("uid-" + name), Generation: 1},
		Spec: api.ReplicaSetSpec{
			Replicas: ptr(replicas),
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name, "tier": "web"}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "img:1"}}},
			},
		},
	}
}

type podState int

const (
	unscheduled podState = iota
	pending
	runningNotReady
	ready
)

func newPod(name string, owner *api.ReplicaSet, st podState, created time.Time) *api.Pod {
	p := &api.Pod{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns", UID: api.UID("uid-" + name), CreationTimestamp: api.NewTime(created), Labels: map[string]string{"app": "web", "tier": "web"}},
	}
	if owner != nil {
		p.Labels = owner.Spec.Template.Labels
		p.OwnerReferences = []api.OwnerReference{controller.NewControllerRef(&owner.ObjectMeta, "apps/v1", "ReplicaSet")}
	}
	if st >= pending {
		p.Spec.NodeName = "node-1"
		p.Status.Phase = api.PodPending
	}
	if st >= runningNotReady {
		p.Status.Phase = api.PodRunning
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionFalse}}
	}
	if st == ready {
		p.Status.Conditions[0].Status = api.ConditionTrue
		p.Status.Conditions[0].LastTransitionTime = api.NewTime(created.Add(time.Second))
	}
	return p
}

func TestSyncCreatesMissingPodsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seed(newRS("web", 3))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	// The cache never sees the new pods (a slow watch): expectations must
	// keep a second sync from creating again.
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	acts := f.actions()
	if n := count(acts, "create pods"); n != 3 {
		t.Fatalf("creates = %d, want 3: %v", n, acts)
	}
	if add, _ := f.rsc.expectations.Pending("ns/web"); add != 3 {
		t.Errorf("pending creations = %d, want 3", add)
	}
	var pods api.PodList
	for _, a := range f.srv.Actions() {
		if a.Verb == "create" && a.Resource == "pods" {
			var p api.Pod
			if err := json.Unmarshal(a.Body, &p); err != nil {
				t.Fatal(err)
			}
			pods.Items = append(pods.Items, p)
		}
	}
	p := pods.Items[0]
	ref := api.GetControllerOf(&p.ObjectMeta)
	if p.GenerateName != "web-" || p.Labels["tier"] != "web" || ref == nil || ref.UID != f.cached("web").UID ||
		ref.Kind != "ReplicaSet" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("created pod = %+v", p.ObjectMeta)
	}
	evs := f.rec.Events()
	if len(evs) != 3 || !strings.HasPrefix(evs[0], "Normal SuccessfulCreate Created pod: web-") {
		t.Errorf("events = %v", evs)
	}
}

func TestSyncDeletesByPreference(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cases := []struct {
		name string
		pods func(rs *api.ReplicaSet) []*api.Pod
		want []string // deleted
	}{
		{"unscheduled, then pending, then not ready", func(rs *api.ReplicaSet) []*api.Pod {
			return []*api.Pod{
				newPod("ready", rs, ready, now.Add(-time.Hour)),
				newPod("notready", rs, runningNotReady, now.Add(-time.Hour)),
				newPod("pending", rs, pending, now.Add(-time.Hour)),
				newPod("unscheduled", rs, unscheduled, now.Add(-time.Hour)),
			}
		}, []string{"pending", "unscheduled"}},
		{"newest ready first", func(rs *api.ReplicaSet) []*api.Pod {
			return []*api.Pod{
				newPod("old", rs, ready, now.Add(-3*time.Hour)),
				newPod("newest", rs, ready, now.Add(-time.Minute)),
				newPod("middle", rs, ready, now.Add(-2*time.Hour)),
			}
		}, []string{"newest"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.seed(newRS("web", 2))
			for _, p := range tc.pods(f.cached("web")) {
				f.seed(p)
			}
			if err := f.sync("web"); err != nil {
				t.Fatal(err)
			}
			var deleted []string
			for _, a := range f.srv.Actions() {
				if a.Verb == "delete" {
					deleted = append(deleted, a.Name)
				}
			}
			slices.Sort(deleted)
			if !slices.Equal(deleted, tc.want) {
				t.Errorf("deleted %v, want %v", deleted, tc.want)
			}
			if _, del := f.rsc.expectations.Pending("ns/web"); del != len(tc.want) {
				t.Errorf("pending deletions = %d", del)
			}
			if n := count(f.rec.Events(), "Normal SuccessfulDelete Deleted pod: "); n != len(tc.want) {
				t.Errorf("events = %v", f.rec.Events())
			}
		})
	}
}

func TestSyncAdoptsAndReleases(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seed(newRS("web", 2))
	rs := f.cached("web")
	now := time.Now()
	orphan := newPod("orphan", nil, ready, now)
	orphan.Labels = map[string]string{"app": "web"}
	stray := newPod("stray", rs, ready, now)
	stray.Labels = map[string]string{"app": "other"}
	other := newPod("others", nil, ready, now)
	other.Labels = map[string]string{"app": "web"}
	other.OwnerReferences = []api.OwnerReference{controller.NewControllerRef(&api.ObjectMeta{Name: "x", UID: "uid-x"}, "apps/v1", "ReplicaSet")}
	f.seed(orphan, stray, other, newPod("mine", rs, ready, now))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	var patched []string
	for _, a := range f.srv.Actions() {
		if a.Verb == "patch" {
			patched = append(patched, a.Name)
		}
	}
	slices.Sort(patched)
	if !slices.Equal(patched, []string{"orphan", "stray"}) {
		t.Fatalf("patched %v, want orphan (adopted) and stray (released)", patched)
	}
	var got api.Pod
	f.srv.Object(resourceInfo("pods"), "ns", "orphan", &got)
	if ref := api.GetControllerOf(&got.ObjectMeta); ref == nil || ref.UID != rs.UID {
		t.Errorf("orphan not adopted: %+v", got.OwnerReferences)
	}
	f.srv.Object(resourceInfo("pods"), "ns", "stray", &got)
	if len(got.OwnerReferences) != 0 {
		t.Errorf("stray not released: %+v", got.OwnerReferences)
	}
	// mine + orphan = 2 = replicas: nothing created or deleted.
	if n := count(f.actions(), "create pods") + count(f.actions(), "delete pods"); n != 0 {
		t.Errorf("unexpected creates/deletes: %v", f.actions())
	}
}

func TestSyncStatus(t *testing.T) {
	t.Parallel()
	now := time.Now()
	rs := newRS("web", 4)
	rs.Spec.MinReadySeconds = 60
	f := newFixture(t)
	f.seed(rs)
	rs = f.cached("web")
	old := newPod("old", rs, ready, now.Add(-time.Hour))
	fresh := newPod("fresh", rs, ready, now.Add(-10*time.Second))
	unlabeled := newPod("partial", rs, runningNotReady, now)
	unlabeled.Labels = map[string]string{"app": "web"} // matches the selector, not the template
	f.seed(old, fresh, unlabeled, newPod("pend", rs, pending, now))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	var got api.ReplicaSet
	f.srv.Object(resourceInfo("replicasets"), "ns", "web", &got)
	want := api.ReplicaSetStatus{Replicas: 4, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: got.Generation}
	if got.Status.Replicas != want.Replicas || got.Status.FullyLabeledReplicas != want.FullyLabeledReplicas ||
		got.Status.ReadyReplicas != want.ReadyReplicas || got.Status.AvailableReplicas != want.AvailableReplicas ||
		got.Status.ObservedGeneration != want.ObservedGeneration {
		t.Errorf("status = %+v, want %+v", got.Status, want)
	}
	if n := count(f.actions(), "update replicasets.apps ns/web/status"); n != 1 {
		t.Errorf("status updates = %d: %v", n, f.actions())
	}
}

func TestSyncFailedCreateSlowStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var attempts atomic.Int32
	f.srv.PrependReactor("create", "pods", func(a clienttest.Action) (bool, any, error) {
		attempts.Add(1)
		return true, nil, apierrors.NewForbidden(apierrors.GroupResource{Resource: "pods"}, "", errors.New("exceeded quota"))
	})
	f.seed(newRS("web", 5))
	if err := f.sync("web"); err == nil {
		t.Fatal("sync succeeded although every create fails")
	}
	if n := attempts.Load(); n != 1 {
		t.Errorf("create attempts = %d, want 1 (slow start stops after the first failed batch)", n)
	}
	if add, _ := f.rsc.expectations.Pending("ns/web"); add != 0 {
		t.Errorf("failed creates still expected: %d", add)
	}
	var got api.ReplicaSet
	f.srv.Object(resourceInfo("replicasets"), "ns", "web", &got)
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != api.ReplicaSetReplicaFailure || got.Status.Conditions[0].Reason != "FailedCreate" {
		t.Errorf("conditions = %+v", got.Status.Conditions)
	}
	if evs := f.rec.Events(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning FailedCreate Error creating: ") {
		t.Errorf("events = %v", evs)
	}
}

func TestSlowStartBatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		count, failAt, wantOK, wantCalls int
	}{
		{count: 10, failAt: -1, wantOK: 10, wantCalls: 10},
		{count: 10, failAt: 2, wantOK: 2, wantCalls: 3}, // batches 1, 2(one fails)
		{count: 10, failAt: 3, wantOK: 6, wantCalls: 7}, // batches 1, 2, 4(one fails)
		{count: 0, failAt: -1, wantOK: 0, wantCalls: 0},
	}
	for _, tc := range cases {
		var calls atomic.Int32
		ok, err := SlowStartBatch(tc.count, 1, func() error {
			if n := int(calls.Add(1)) - 1; n == tc.failAt {
				return errors.New("boom")
			}
			return nil
		})
		if ok != tc.wantOK || int(calls.Load()) != tc.wantCalls || (err != nil) != (tc.failAt >= 0) {
			t.Errorf("%+v: ok=%d calls=%d err=%v", tc, ok, calls.Load(), err)
		}
	}
}

func TestPodEventsObserveExpectations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rs := newRS("web", 2)
	f.seed(rs)
	key := "ns/web"
	f.rsc.expectations.ExpectCreations(key, 1)
	pods := f.rsc.podEvents()
	pods.OnAdd(newPod("a", f.cached("web"), pending, time.Now()), false)
	if !f.rsc.expectations.Satisfied(key) {
		t.Error("creation not observed on the pod's add")
	}
	p := newPod("b", f.cached("web"), ready, time.Now())
	f.rsc.expectations.ExpectDeletions(key, []string{"ns/b"})
	terminating := api.DeepCopy(p)
	terminating.ResourceVersion = "99"
	terminating.DeletionTimestamp = ptr(api.Now())
	pods.OnUpdate(p, terminating)
	if !f.rsc.expectations.Satisfied(key) {
		t.Error("deletion not observed when the pod became terminating")
	}
}

func resourceInfo(name string) api.ResourceInfo {
	info, ok := api.FindResource(name)
	if !ok {
		panic("unknown resource " + name)
	}
	return info
}

func TestSyncBurstLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.rsc.burst = 5 // BurstReplicas is 500; the same cap, smaller
	f.seed(newRS("web", 8))
	if err := f.sync("web"); err != nil {
		t.Fatal(err)
	}
	if n := count(f.actions(), "create pods"); n != 5 {
		t.Errorf("creates = %d, want the burst of 5", n)
	}
}
