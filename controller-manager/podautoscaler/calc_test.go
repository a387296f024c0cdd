package podautoscaler

import (
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// pod is a running, long-ready pod with one container requesting cpu
// millicores (none when 0).
func pod(name string, cpu int64, phase api.PodPhase, ready api.ConditionStatus) *api.Pod {
	start := api.Time{Time: t0.Add(-time.Hour)}
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "app"}}},
		Status: api.PodStatus{Phase: phase, StartTime: &start,
			Conditions: []api.PodCondition{{Type: api.PodReady, Status: ready, LastTransitionTime: api.Time{Time: t0.Add(-50 * time.Minute)}}}}}
	if cpu > 0 {
		p.Spec.Containers[0].Resources.Requests = api.ResourceList{api.ResourceCPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI)}
	}
	return p
}

func metrics(values map[string]int64) map[string]podMetric {
	out := map[string]podMetric{}
	for n, v := range values {
		out[n] = podMetric{value: v, timestamp: t0.Add(-10 * time.Second), window: 15 * time.Second}
	}
	return out
}

func TestResourceReplicas(t *testing.T) {
	t.Parallel()
	calc := calculator{tolerance: Tolerance, cpuInitializationPeriod: 5 * time.Minute, initialReadinessDelay: 30 * time.Second, now: func() time.Time { return t0 }}
	run := api.PodRunning
	tests := []struct {
		name      string
		current   int32
		target    int32
		pods      []*api.Pod
		metrics   map[string]int64
		want      int32
		wantUtil  int32
		wantError string
	}{
		{name: "scale up by the usage ratio", current: 3, target: 50,
			pods:    []*api.Pod{pod("a", 1000, run, "True"), pod("b", 1000, run, "True"), pod("c", 1000, run, "True")},
			metrics: map[string]int64{"a": 1000, "b": 1000, "c": 1000}, want: 6, wantUtil: 100},
		{name: "within the tolerance nothing changes", current: 3, target: 50,
			pods:    []*api.Pod{pod("a", 1000, run, "True"), pod("b", 1000, run, "True"), pod("c", 1000, run, "True")},
			metrics: map[string]int64{"a": 520, "b": 540, "c": 500}, want: 3, wantUtil: 52},
		{name: "scale down, a missing pod counts as using its request", current: 4, target: 50,
			pods:    []*api.Pod{pod("a", 1000, run, "True"), pod("b", 1000, run, "True"), pod("c", 1000, run, "True"), pod("d", 1000, run, "True")},
			metrics: map[string]int64{"a": 100, "b": 100, "c": 100}, want: 3, wantUtil: 10},
		{name: "scale up with an unready pod counted as idle", current: 2, target: 50,
			pods:    []*api.Pod{pod("a", 1000, run, "True"), pod("b", 1000, api.PodPending, "False")},
			metrics: map[string]int64{"a": 1000}, want: 2, wantUtil: 100},
		{name: "failed and deleted pods are ignored", current: 3, target: 50,
			pods:    []*api.Pod{pod("a", 1000, run, "True"), pod("b", 1000, api.PodFailed, "False")},
			metrics: map[string]int64{"a": 800, "b": 5000}, want: 2, wantUtil: 80},
		{name: "a container without a request", current: 1, target: 50,
			pods: []*api.Pod{pod("a", 0, run, "True")}, metrics: map[string]int64{"a": 100},
			wantError: "missing request for cpu in container app of Pod a"},
		{name: "no pods", current: 1, target: 50, metrics: map[string]int64{"a": 100},
			wantError: "no pods returned by selector while calculating replica count"},
		{name: "only unready pods", current: 1, target: 50,
			pods: []*api.Pod{pod("a", 1000, api.PodPending, "False")}, metrics: map[string]int64{"a": 100},
			wantError: "did not receive metrics for targeted pods (pods might be unready)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, util, _, err := calc.resourceReplicas(tc.current, tc.target, api.ResourceCPU, "", tc.pods, metrics(tc.metrics))
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err = %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil || got != tc.want || util != tc.wantUtil {
				t.Errorf("replicas %d utilization %d err %v; want %d, %d", got, util, err, tc.want, tc.wantUtil)
			}
		})
	}
}

func TestRawReplicas(t *testing.T) {
	t.Parallel()
	calc := calculator{tolerance: Tolerance, now: func() time.Time { return t0 }}
	pods := []*api.Pod{pod("a", 0, api.PodRunning, "True"), pod("b", 0, api.PodRunning, "True")}
	got, usage, err := calc.rawReplicas(2, 500, api.ResourceMemory, pods, metrics(map[string]int64{"a": 1000, "b": 1000}))
	if err != nil || got != 4 || usage != 1000 {
		t.Errorf("raw replicas %d usage %d err %v, want 4 1000", got, usage, err)
	}
	got, _, _ = calc.rawReplicas(2, 500, api.ResourceMemory, pods, metrics(map[string]int64{"a": 480, "b": 530}))
	if got != 2 {
		t.Errorf("within tolerance: %d, want 2", got)
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	pods := func(v, p int32) autoscalingv2.HPAScalingPolicy {
		return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: v, PeriodSeconds: p}
	}
	def := defaultBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{}, 5*time.Minute)

	// The default scale-up rate: at most 4 pods or 100% per 15 s.
	h := newHistory()
	l := h.normalizeBehavior("k", def, 2, 20, 1, 100, t0)
	if l.replicas != 6 || l.limitReason != "ScaleUpLimit" || l.stabilizedTo != 20 {
		t.Errorf("default scale-up: %+v", l)
	}
	h.recordScale("k", def, 2, 6, t0)
	// Within the same period the 4 pods already added count.
	if l = h.normalizeBehavior("k", def, 6, 20, 1, 100, t0.Add(5*time.Second)); l.replicas != 6 {
		t.Errorf("second scale-up in the period: %+v", l)
	}
	if l = h.normalizeBehavior("k", def, 6, 20, 1, 100, t0.Add(20*time.Second)); l.replicas != 12 {
		t.Errorf("scale-up in the next period: %+v", l)
	}

	// Scale-down waits for the stabilization window's highest recommendation.
	h = newHistory()
	h.recordInitial("k", 10, t0)
	l = h.normalizeBehavior("k", def, 10, 2, 1, 100, t0.Add(time.Minute))
	if l.replicas != 10 || !l.stabilized || l.stabilizeReason != "ScaleDownStabilized" || l.limitReason != "DesiredWithinRange" {
		t.Errorf("stabilized scale-down: %+v", l)
	}
	if l = h.normalizeBehavior("k", def, 10, 2, 1, 100, t0.Add(6*time.Minute+time.Second)); l.replicas != 2 || l.stabilized {
		t.Errorf("scale-down after the window: %+v", l)
	}

	// A custom policy: one pod a minute down, no window; the minimum.
	zero := int32(0)
	slow := defaultBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: &zero, Policies: []autoscalingv2.HPAScalingPolicy{pods(1, 60)}}}, 5*time.Minute)
	h = newHistory()
	if l = h.normalizeBehavior("k", slow, 10, 2, 1, 100, t0); l.replicas != 9 || l.limitReason != "ScaleDownLimit" {
		t.Errorf("policy-limited scale-down: %+v", l)
	}
	if l = h.normalizeBehavior("k", slow, 3, 1, 3, 100, t0); l.replicas != 3 || l.limitReason != "TooFewReplicas" {
		t.Errorf("minimum: %+v", l)
	}
	disabled := autoscalingv2.DisabledPolicySelect
	off := defaultBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: &disabled}}, time.Minute)
	if l = newHistory().normalizeBehavior("k", off, 3, 8, 1, 100, t0); l.replicas != 3 {
		t.Errorf("scale-up disabled: %+v", l)
	}

	// Without behavior: twice the size (at least 4) per sync, and the maximum.
	h = newHistory()
	if l = h.normalizeLegacy("k", 1, 10, 1, 100, 5*time.Minute, t0); l.replicas != 4 || l.limitReason != "ScaleUpLimit" {
		t.Errorf("legacy scale-up: %+v", l)
	}
	if l = h.normalizeLegacy("k", 4, 10, 1, 5, 5*time.Minute, t0); l.replicas != 5 || l.limitReason != "TooManyReplicas" {
		t.Errorf("legacy maximum: %+v", l)
	}
}
