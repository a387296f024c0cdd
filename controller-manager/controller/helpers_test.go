package controller

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

func TestExpectations(t *testing.T) {
	t.Parallel()
	e := NewExpectations()
	if !e.Satisfied("ns/a") {
		t.Fatal("unknown key must be satisfied")
	}
	e.ExpectCreations("ns/a", 2)
	if e.Satisfied("ns/a") {
		t.Fatal("2 creations pending: not satisfied")
	}
	e.CreationObserved("ns/a")
	e.CreationObserved("ns/a")
	if !e.Satisfied("ns/a") {
		t.Fatal("all creations observed: satisfied")
	}
	e.ExpectDeletions("ns/a", []string{"ns/p1", "ns/p2"})
	e.DeletionObserved("ns/a", "ns/other")
	e.DeletionObserved("ns/a", "ns/p1")
	e.DeletionObserved("ns/a", "ns/p1") // twice: counted once
	if add, del := e.Pending("ns/a"); add != 0 || del != 1 {
		t.Fatalf("pending = %d, %d; want 0, 1", add, del)
	}
	now := time.Now()
	e.now = func() time.Time { return now.Add(ExpectationsTimeout + time.Second) }
	if !e.Satisfied("ns/a") {
		t.Fatal("expired expectations must be satisfied")
	}
	e.Delete("ns/a")
	if add, del := e.Pending("ns/a"); add != 0 || del != 0 {
		t.Fatal("deleted key still pending")
	}
}

func TestComputeHash(t *testing.T) {
	t.Parallel()
	a := &api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "nginx:1"}}}}
	b := api.DeepCopy(a)
	b.Spec.Containers[0].Image = "nginx:2"
	one := int32(1)
	ha, hb, hc := ComputeHash(a, nil), ComputeHash(b, nil), ComputeHash(a, &one)
	if ha != ComputeHash(api.DeepCopy(a), nil) {
		t.Error("hash not stable")
	}
	if ha == hb || ha == hc {
		t.Errorf("hashes collide: %s %s %s", ha, hb, hc)
	}
	for _, r := range ha {
		if !strings.ContainsRune(safeAlphabet, r) {
			t.Errorf("hash %q has %q outside the safe alphabet", ha, r)
		}
	}
}

func TestPodsByDeletionPreference(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ready := func(name string, created, readySince time.Duration) *api.Pod {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, CreationTimestamp: api.NewTime(base.Add(created))},
			Spec: api.PodSpec{NodeName: "n"},
			Status: api.PodStatus{Phase: api.PodRunning, Conditions: []api.PodCondition{{Type: api.PodReady,
				Status: api.ConditionTrue, LastTransitionTime: api.NewTime(base.Add(readySince))}}}}
	}
	pods := []*api.Pod{
		ready("old-ready", 0, time.Minute),
		ready("new-ready", time.Hour, 2*time.Hour),
		{ObjectMeta: api.ObjectMeta{Name: "running-not-ready"}, Spec: api.PodSpec{NodeName: "n"}, Status: api.PodStatus{Phase: api.PodRunning}},
		{ObjectMeta: api.ObjectMeta{Name: "pending"}, Spec: api.PodSpec{NodeName: "n"}, Status: api.PodStatus{Phase: api.PodPending}},
		{ObjectMeta: api.ObjectMeta{Name: "unscheduled"}, Status: api.PodStatus{Phase: api.PodPending}},
	}
	sort.Sort(PodsByDeletionPreference{Pods: pods})
	want := []string{"unscheduled", "pending", "running-not-ready", "new-ready", "old-ready"}
	for i, p := range pods {
		if p.Name != want[i] {
			t.Fatalf("order[%d] = %s, want %s (all: %v)", i, p.Name, want[i], names(pods))
		}
	}
}

func names(pods []*api.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestIsPodAvailable(t *testing.T) {
	t.Parallel()
	now := time.Now()
	p := &api.Pod{Status: api.PodStatus{Conditions: []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue,
		LastTransitionTime: api.NewTime(now.Add(-10 * time.Second))}}}}
	for _, tc := range []struct {
		minReady int32
		want     bool
	}{{0, true}, {5, true}, {30, false}} {
		if got := IsPodAvailable(p, tc.minReady, now); got != tc.want {
			t.Errorf("minReadySeconds %d: available = %v, want %v", tc.minReady, got, tc.want)
		}
	}
}
