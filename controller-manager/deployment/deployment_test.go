package deployment

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/controller-manager/controller"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

// fixture is a controller with hand-seeded caches over a clienttest
// server recording its requests.
type fixture struct {
	t   *testing.T
	srv *clienttest.Server
	dc  *Controller
	rec *events.FakeRecorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := clienttest.NewServer(t)
	rec := &events.FakeRecorder{}
	f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	dc, err := NewController(srv.Client(), f, rec, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, srv: srv, dc: dc, rec: rec}
}

func info(name string) api.ResourceInfo {
	i, _ := api.FindResource(name)
	return i
}

// seedDeployment stores d (keeping its status) and returns the stored copy.
func (f *fixture) seedDeployment(d *api.Deployment) *api.Deployment {
	f.t.Helper()
	if err := f.srv.Add(d); err != nil {
		f.t.Fatal(err)
	}
	var got api.Deployment
	f.srv.Object(info("deployments"), d.Namespace, d.Name, &got)
	got.Status = d.Status
	f.dc.deployments.Store().Add(&got)
	return &got
}

// seedRS stores rs owned by d.
func (f *fixture) seedRS(d *api.Deployment, rs *api.ReplicaSet) *api.ReplicaSet {
	f.t.Helper()
	rs.OwnerReferences = []api.OwnerReference{controller.NewControllerRef(&d.ObjectMeta, "apps/v1", "Deployment")}
	if err := f.srv.Add(rs); err != nil {
		f.t.Fatal(err)
	}
	var got api.ReplicaSet
	f.srv.Object(info("replicasets"), rs.Namespace, rs.Name, &got)
	got.Status = rs.Status
	got.Status.ObservedGeneration = got.Generation
	f.dc.rss.Store().Add(&got)
	return &got
}

func (f *fixture) sync(name string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.dc.syncDeployment(ctx, "ns/"+name); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
}

// writes are the recorded writes as "verb resource ns/name[/sub]".
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.srv.Actions() {
		if a.Verb != "get" && a.Verb != "list" && a.Verb != "watch" {
			out = append(out, a.String())
		}
	}
	return out
}

func (f *fixture) rs(name string) *api.ReplicaSet {
	var rs api.ReplicaSet
	if !f.srv.Object(info("replicasets"), "ns", name, &rs) {
		return nil
	}
	return &rs
}

func ptr[T any](v T) *T { return &v }

func deployment(replicas int32, image string, surge, unavailable api.IntOrString) *api.Deployment {
	lbl := map[string]string{"app": "web"}
	return &api.Deployment{
		TypeMeta:   api.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1},
		Spec: api.DeploymentSpec{
			Replicas: ptr(replicas),
			Selector: &api.LabelSelector{MatchLabels: lbl},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: lbl},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: image}}}},
			Strategy: api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			RevisionHistoryLimit:    ptr(int32(10)),
			ProgressDeadlineSeconds: ptr(int32(600)),
		},
	}
}

// replicaSetFor builds the ReplicaSet the controller makes for image.
func replicaSetFor(d *api.Deployment, image string, replicas, available int32, revision string) *api.ReplicaSet {
	t := *api.DeepCopy(&d.Spec.Template)
	t.Spec.Containers[0].Image = image
	hash := controller.ComputeHash(&t, nil)
	t.Labels = cloneAndAdd(t.Labels, api.DefaultDeploymentUniqueLabelKey, hash)
	return &api.ReplicaSet{
		TypeMeta: api.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: api.ObjectMeta{Name: "web-" + hash, Namespace: "ns", Labels: t.Labels, Annotations: map[string]string{
			api.RevisionAnnotation: revision, api.DesiredReplicasAnnotation: "10", api.MaxReplicasAnnotation: "13"},
			CreationTimestamp: api.NewTime(time.Now().Add(-time.Hour * time.Duration(10-len(revision))))},
		Spec: api.ReplicaSetSpec{Replicas: ptr(replicas), Template: t,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web", api.DefaultDeploymentUniqueLabelKey: hash}}},
		Status: api.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: available, AvailableReplicas: available},
	}
}

func TestSyncCreatesNewReplicaSet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	d := f.seedDeployment(deployment(3, "img:1", api.FromString("25%"), api.FromString("25%")))
	f.sync("web")
	hash := controller.ComputeHash(&d.Spec.Template, nil)
	rs := f.rs("web-" + hash)
	if rs == nil {
		t.Fatalf("no replica set web-%s; writes %v", hash, f.writes())
	}
	if *rs.Spec.Replicas != 3 || rs.Spec.Selector.MatchLabels[api.DefaultDeploymentUniqueLabelKey] != hash ||
		rs.Spec.Template.Labels[api.DefaultDeploymentUniqueLabelKey] != hash || rs.Labels["app"] != "web" {
		t.Errorf("replica set spec = %+v labels %v", rs.Spec, rs.Labels)
	}
	// maxSurge 25% of 3 rounds up to 1.
	if rs.Annotations[api.RevisionAnnotation] != "1" || rs.Annotations[api.DesiredReplicasAnnotation] != "3" || rs.Annotations[api.MaxReplicasAnnotation] != "4" {
		t.Errorf("annotations = %v", rs.Annotations)
	}
	if ref := api.GetControllerOf(&rs.ObjectMeta); ref == nil || ref.UID != d.UID || ref.Kind != "Deployment" {
		t.Errorf("owner = %+v", rs.OwnerReferences)
	}
	want := "Normal ScalingReplicaSet Scaled up replica set web-" + hash + " from 0 to 3"
	if evs := f.rec.Events(); !slices.Contains(evs, want) {
		t.Errorf("events %v lack %q", evs, want)
	}
	var got api.Deployment
	f.srv.Object(info("deployments"), "ns", "web", &got)
	c := getCondition(got.Status, api.DeploymentProgressing)
	if c == nil || c.Reason != api.NewReplicaSetReason || c.Message != `Created new replica set "web-`+hash+`"` {
		t.Errorf("Progressing = %+v", c)
	}
	if got.Status.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration = %d", got.Status.ObservedGeneration)
	}
}

func TestRollingUpdateSteps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                  string
		newReplicas, newAvail int32 // -1: no new replica set yet
		wantOld, wantNew      int32
		wantEvent             string
	}{
		// 10 replicas, maxSurge 3, maxUnavailable 2.
		// Creating the new one at 3 (13 = 10+3) leaves room to take 2 old
		// ones down in the same sync (13 - 8 min available - 3 new unavailable).
		{"surge first", -1, 0, 8, 3, "Scaled up replica set web-NEW from 0 to 3"},
		{"then scale old down by maxUnavailable", 3, 0, 8, 3, "Scaled down replica set web-OLD from 10 to 8"},
		{"new pods available free more", 3, 3, 5, 3, "Scaled down replica set web-OLD from 10 to 5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			d := f.seedDeployment(deployment(10, "img:2", api.FromInt(3), api.FromInt(2)))
			old := f.seedRS(d, replicaSetFor(d, "img:1", 10, 10, "1"))
			newRS := replicaSetFor(d, "img:2", tc.newReplicas, tc.newAvail, "2")
			if tc.newReplicas >= 0 {
				newRS = f.seedRS(d, newRS)
			}
			f.sync("web")
			gotOld, gotNew := f.rs(old.Name), f.rs(newRS.Name)
			if gotNew == nil || *gotOld.Spec.Replicas != tc.wantOld || *gotNew.Spec.Replicas != tc.wantNew {
				t.Fatalf("old/new = %v/%v, want %d/%d; writes %v", gotOld.Spec.Replicas, gotNew, tc.wantOld, tc.wantNew, f.writes())
			}
			want := strings.NewReplacer("web-NEW", newRS.Name, "web-OLD", old.Name).Replace(tc.wantEvent)
			if evs := f.rec.Events(); !slices.Contains(evs, "Normal ScalingReplicaSet "+want) {
				t.Errorf("events %v lack %q", evs, want)
			}
		})
	}
}

func TestProportionalScaling(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	d := f.seedDeployment(deployment(20, "img:2", api.FromInt(3), api.FromInt(2)))
	old := f.seedRS(d, replicaSetFor(d, "img:1", 6, 6, "1"))
	newRS := f.seedRS(d, replicaSetFor(d, "img:2", 4, 0, "2"))
	f.sync("web")
	// 23 allowed (20+3) for 10 existing: +13, spread by size (13 was the
	// old max-replicas): old 6*23/13 → +5, new 4*23/13 → +3, rest to the largest.
	gotOld, gotNew := f.rs(old.Name), f.rs(newRS.Name)
	if *gotOld.Spec.Replicas != 16 || *gotNew.Spec.Replicas != 7 {
		t.Errorf("old/new = %d/%d, want 16/7", *gotOld.Spec.Replicas, *gotNew.Spec.Replicas)
	}
	for _, rs := range []*api.ReplicaSet{gotOld, gotNew} {
		if rs.Annotations[api.DesiredReplicasAnnotation] != "20" || rs.Annotations[api.MaxReplicasAnnotation] != "23" {
			t.Errorf("%s annotations = %v", rs.Name, rs.Annotations)
		}
	}
}

func TestCleanupKeepsRevisionHistoryLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dd := deployment(2, "img:4", api.FromInt(1), api.FromInt(0))
	dd.Spec.RevisionHistoryLimit = ptr(int32(1))
	dd.Spec.Paused = true // a paused deployment cleans up without rolling
	d := f.seedDeployment(dd)
	for i, img := range []string{"img:1", "img:2", "img:3"} {
		f.seedRS(d, replicaSetFor(d, img, 0, 0, string(rune('1'+i))))
	}
	cur := f.seedRS(d, replicaSetFor(d, "img:4", 2, 2, "4"))
	cur.Annotations[api.DesiredReplicasAnnotation] = "2"
	f.sync("web")
	var deleted []string
	for _, a := range f.srv.Actions() {
		if a.Verb == "delete" {
			deleted = append(deleted, a.Name)
		}
	}
	want := []string{replicaSetFor(d, "img:1", 0, 0, "").Name, replicaSetFor(d, "img:2", 0, 0, "").Name}
	slices.Sort(deleted)
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want revisions 1 and 2 %v", deleted, want)
	}
}

func TestProgressDeadlineExceeded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dd := deployment(2, "img:2", api.FromInt(1), api.FromInt(0))
	dd.Spec.ProgressDeadlineSeconds = ptr(int32(60))
	long := time.Now().Add(-10 * time.Minute)
	dd.Status = api.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2,
		Conditions: []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionTrue, Reason: api.ReplicaSetUpdatedReason,
			LastUpdateTime: api.NewTime(long), LastTransitionTime: api.NewTime(long)}}}
	d := f.seedDeployment(dd)
	old := replicaSetFor(d, "img:1", 2, 2, "1")
	old.Annotations[api.DesiredReplicasAnnotation], old.Annotations[api.MaxReplicasAnnotation] = "2", "3"
	f.seedRS(d, old)
	newRS := replicaSetFor(d, "img:2", 1, 0, "2")
	newRS.Annotations[api.DesiredReplicasAnnotation], newRS.Annotations[api.MaxReplicasAnnotation] = "2", "3"
	newRS = f.seedRS(d, newRS)
	f.sync("web")
	var got api.Deployment
	f.srv.Object(info("deployments"), "ns", "web", &got)
	c := getCondition(got.Status, api.DeploymentProgressing)
	if c == nil || c.Status != api.ConditionFalse || c.Reason != api.TimedOutReason || c.Message != `ReplicaSet "`+newRS.Name+`" has timed out progressing.` {
		b, _ := json.Marshal(got.Status)
		t.Errorf("status = %s; writes %v", b, f.writes())
	}
}

func TestResolveFenceposts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		surge, unavailable  api.IntOrString
		desired             int32
		wantSurge, wantUnav int32
	}{
		{api.FromString("25%"), api.FromString("25%"), 10, 3, 2}, // surge rounds up, unavailable down
		{api.FromString("25%"), api.FromString("25%"), 1, 1, 0},
		{api.FromInt(0), api.FromString("1%"), 10, 0, 1}, // both zero: unavailable becomes 1
		{api.FromInt(2), api.FromInt(3), 5, 2, 3},
	}
	for _, tc := range cases {
		s, u, err := ResolveFenceposts(&tc.surge, &tc.unavailable, tc.desired)
		if err != nil || s != tc.wantSurge || u != tc.wantUnav {
			t.Errorf("%v/%v of %d = %d/%d (%v), want %d/%d", tc.surge, tc.unavailable, tc.desired, s, u, err, tc.wantSurge, tc.wantUnav)
		}
	}
	bad := api.FromString("lots")
	if _, _, err := ResolveFenceposts(&bad, nil, 3); err == nil {
		t.Error("a non-percent string resolved")
	}
}
