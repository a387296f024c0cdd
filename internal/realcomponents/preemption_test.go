package realcomponents

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

// preemptionOutcome is what a scheduler's preemption left in the API.
type preemptionOutcome struct {
	Nominated string
	// Victims are the pods deleted with DisruptionTarget, sorted.
	Victims    []string
	Conditions []string
	// FailedScheduling is the message of the attempt that preempted;
	// Preempted are the victims' events ("victim: message").
	FailedScheduling string
	Preempted        []string
}

// TestPreemptionAsKube runs the same preemption with kube-scheduler v1.37
// and with ours, each against our apiserver, and compares what they did.
// Two nodes with 3 of scheduling.k8s.io/foo each: on a, a-low (priority
// 1, asks 1) and a-mid (50, asks 2); on b, b-low1 and b-low2 (1, ask 1)
// and b-mid (50, asks 1). A pod of priority 100 asking 2 would evict a-mid
// on a or both low pods on b: kube picks b (the lower highest victim
// priority). With a PodDisruptionBudget guarding b's low pods (none
// allowed), b's candidate violates it and a is picked.
func TestPreemptionAsKube(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real kube-scheduler (skipped with -short)")
	}
	run := func(name string, start func(t *testing.T, s *apiservertest.Server)) map[bool]preemptionOutcome {
		out := map[bool]preemptionOutcome{}
		t.Run(name, func(t *testing.T) {
			s := apiservertest.Start(t, apiservertest.WithTLS)
			admin := s.AdminClient(t)
			start(t, s)
			for _, pdb := range []bool{false, true} {
				out[pdb] = preemptionScenario(t, admin, pdb)
			}
		})
		return out
	}
	kube := run("kube-scheduler", func(t *testing.T, s *apiservertest.Server) {
		startKube(t, "kube-scheduler", filepath.Join(s.Options.CertDir, "scheduler.kubeconfig"))
	})
	ours := run("ours", func(t *testing.T, s *apiservertest.Server) {
		c := s.AdminClient(t)
		ctx, cancel := context.WithCancel(context.Background())
		log := slog.New(slog.DiscardHandler)
		b := events.NewBroadcaster(c, events.Options{Component: scheduling.DefaultSchedulerName, Host: "test", Logger: log})
		sched, err := scheduling.New(scheduling.Config{Client: c, Recorder: b.Recorder(), Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go b.Run(ctx)
		go func() { defer close(done); _ = sched.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	})
	for _, pdb := range []bool{false, true} {
		k, o := kube[pdb], ours[pdb]
		if k.Nominated == "" {
			t.Fatalf("kube-scheduler did not preempt (PDB %v): %+v", pdb, k)
		}
		t.Logf("with PDB %v, kube-scheduler: %+v", pdb, k)
		if fmt.Sprintf("%+v", k) != fmt.Sprintf("%+v", o) {
			t.Errorf("with PDB %v:\nkube-scheduler: %+v\nours:           %+v", pdb, k, o)
		}
	}
}

// victimsRE finds the number of victims a preempting attempt announced.
var victimsRE = regexp.MustCompile(`preempting (\d+) victims`)

// preemptionScenario sets up one case (its own nodes, pods and classes,
// suffixed by the case) and waits for the preemption's traces.
func preemptionScenario(t *testing.T, c *client.Client, withPDB bool) preemptionOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sfx := "1"
	if withPDB {
		sfx = "2"
	}
	foo := api.ResourceName("scheduling.k8s.io/foo")
	for _, n := range []string{"a" + sfx, "b" + sfx} {
		res := api.ResourceList{api.ResourceCPU: resource.MustParse("4"), api.ResourceMemory: resource.MustParse("8Gi"),
			api.ResourcePods: resource.MustParse("110"), foo: resource.MustParse("3")}
		now := api.Now()
		node := &api.Node{
			ObjectMeta: api.ObjectMeta{Name: n, Labels: map[string]string{api.LabelHostname: n, "case": sfx}},
			Status: api.NodeStatus{Capacity: res, Allocatable: res, Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue,
				Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}},
		}
		if _, err := client.Resource[api.Node](c).Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	for _, pc := range []struct {
		name  string
		value int32
	}{{"low", 1}, {"mid", 50}, {"high", 100}} {
		_, err := client.Resource[api.PriorityClass](c).Create(ctx, &api.PriorityClass{ObjectMeta: api.ObjectMeta{Name: pc.name + sfx}, Value: pc.value})
		if err != nil {
			t.Fatal(err)
		}
	}
	pods := client.Resource[api.Pod](c).Namespace("default")
	mk := func(name, class string, n int, node string, lbl map[string]string) {
		p := &api.Pod{
			ObjectMeta: api.ObjectMeta{Name: name + sfx, Namespace: "default", Labels: lbl},
			Spec: api.PodSpec{NodeName: node, PriorityClassName: class + sfx, NodeSelector: map[string]string{"case": sfx},
				Containers: []api.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: api.ResourceRequirements{
					Requests: api.ResourceList{foo: resource.MustParse(fmt.Sprint(n))}, Limits: api.ResourceList{foo: resource.MustParse(fmt.Sprint(n))}}}}},
		}
		if node != "" {
			p.Spec.NodeName = node + sfx
		}
		if _, err := pods.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if withPDB {
		pdb := &api.PodDisruptionBudget{ObjectMeta: api.ObjectMeta{Name: "guard" + sfx, Namespace: "default"},
			Spec: api.PodDisruptionBudgetSpec{Selector: &api.LabelSelector{MatchLabels: map[string]string{"guard": sfx}}}}
		if _, err := client.Resource[api.PodDisruptionBudget](c).Namespace("default").Create(ctx, pdb); err != nil {
			t.Fatal(err)
		}
	}
	guard := map[string]string{"guard": sfx}
	mk("a-low", "low", 1, "a", nil)
	mk("a-mid", "mid", 2, "a", nil)
	mk("b-low1", "low", 1, "b", guard)
	mk("b-low2", "low", 1, "b", guard)
	mk("b-mid", "mid", 1, "b", nil)
	// Let the scheduler's informers see the placed pods first.
	time.Sleep(2 * time.Second)
	mk("preemptor", "high", 2, "", nil)

	var out preemptionOutcome
	waitFor(ctx, t, "the preemption of case "+sfx, func() (bool, string) {
		out = preemptionOutcome{}
		pre, err := pods.Get(ctx, "preemptor"+sfx)
		if err != nil {
			return false, err.Error()
		}
		out.Nominated = pre.Status.NominatedNodeName
		list, err := pods.List(ctx, client.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range list.Items {
			if !strings.HasSuffix(p.Name, sfx) || p.DeletionTimestamp == nil {
				continue
			}
			out.Victims = append(out.Victims, strings.TrimSuffix(p.Name, sfx))
			for _, cd := range p.Status.Conditions {
				if cd.Type == api.DisruptionTarget {
					out.Conditions = append(out.Conditions, fmt.Sprintf("%s %s %s %q", cd.Type, cd.Status, cd.Reason, cd.Message))
				}
			}
		}
		slices.Sort(out.Victims)
		evs, err := client.Resource[api.Event](c).Namespace("default").List(ctx, client.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			name := e.InvolvedObject.Name
			switch {
			case name == "preemptor"+sfx && e.Reason == "FailedScheduling" && strings.Contains(e.Message, "found a potential placement"):
				// The attempt that preempted (later ones wait for the
				// victims, which no kubelet removes here).
				out.FailedScheduling = e.Message
			case strings.HasSuffix(name, sfx) && e.Reason == "Preempted":
				out.Preempted = append(out.Preempted, strings.TrimSuffix(name, sfx)+": "+strings.ReplaceAll(e.Message, string(pre.UID), "<uid>"))
			}
		}
		slices.Sort(out.Preempted)
		// Victims are deleted one by one (kube-scheduler does it in
		// parallel): wait for as many as the attempt announced.
		var want int
		if m := victimsRE.FindStringSubmatch(out.FailedScheduling); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		return out.Nominated != "" && want > 0 && len(out.Victims) == want && len(out.Preempted) == want, fmt.Sprintf("%+v", out)
	})
	return out
}
