package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestHPAV1SharesV2Storage: autoscaling/v1 HorizontalPodAutoscalers are
// the v2 ones converted, as in kube-apiserver, through client-go's typed
// clientsets with their protobuf default: discovery lists v2 (preferred)
// and v1; a v1 HPA reads back as v2 with its CPU target and the 80%
// default; a v2 HPA's other metrics, behavior, current metrics and
// conditions show in v1 as kube's annotations, and an update through v1
// keeps them; watches of v1 see v2's writes; an invalid v1 HPA is refused
// with v2's field paths.
func TestHPAV1SharesV2Storage(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL(), QPS: 100, Burst: 200})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range groups.Groups {
		if g.Name != "autoscaling" {
			continue
		}
		found = true
		var vs []string
		for _, v := range g.Versions {
			vs = append(vs, v.GroupVersion)
		}
		if strings.Join(vs, ",") != "autoscaling/v2,autoscaling/v1" || g.PreferredVersion.GroupVersion != "autoscaling/v2" {
			t.Errorf("autoscaling versions %v, preferred %s; want v2,v1 and v2", vs, g.PreferredVersion.GroupVersion)
		}
	}
	if !found {
		t.Fatal("no autoscaling group in discovery")
	}
	rl, err := cs.Discovery().ServerResourcesForGroupVersion("autoscaling/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rl.APIResources {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "horizontalpodautoscalers,horizontalpodautoscalers/status" {
		t.Errorf("autoscaling/v1 resources %v", names)
	}

	v1 := cs.AutoscalingV1().HorizontalPodAutoscalers("default")
	v2 := cs.AutoscalingV2().HorizontalPodAutoscalers("default")
	w, err := v1.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// A v1 HPA with no CPU target: minReplicas 1 and 80% CPU in v2.
	created, err := v1.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 4,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through autoscaling/v1: %v", err)
	}
	if created.Spec.MinReplicas == nil || *created.Spec.MinReplicas != 1 || created.Spec.TargetCPUUtilizationPercentage == nil ||
		*created.Spec.TargetCPUUtilizationPercentage != 80 || len(created.Annotations) != 0 {
		t.Errorf("created v1 HPA: %+v", created)
	}
	asV2, err := v2.Get(ctx, "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := asV2.Spec.Metrics; len(m) != 1 || m[0].Resource == nil || m[0].Resource.Name != corev1.ResourceCPU ||
		*m[0].Resource.Target.AverageUtilization != 80 || asV2.ResourceVersion != created.ResourceVersion {
		t.Errorf("the v2 view of a v1 HPA: %+v", asV2.Spec)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.(*autoscalingv1.HorizontalPodAutoscaler).Name != "plain" {
		t.Errorf("v1 watch: %v %v", ev.Type, ev.Object)
	}

	// A v2 HPA with what v1 cannot say.
	u60, u50 := int32(60), int32(50)
	window := int32(120)
	mem := resource.MustParse("200Mi")
	full, err := v2.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "full"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"},
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &mem}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u60}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: corev1.ResourceCPU, Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u50}}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &window}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	full.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 3,
		CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: &u50, AverageValue: resource.NewMilliQuantity(50, resource.DecimalSI)}}}},
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.Now(), Reason: "SucceededRescale", Message: "scaled"}}}
	if _, err := v2.UpdateStatus(ctx, full, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := v1.Get(ctx, "full", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 60 {
		t.Errorf("targetCPUUtilizationPercentage %v", p)
	}
	if p := got.Status.CurrentCPUUtilizationPercentage; p == nil || *p != 50 || got.Status.DesiredReplicas != 3 {
		t.Errorf("v1 status %+v", got.Status)
	}
	var others []autoscalingv1.MetricSpec
	if err := json.Unmarshal([]byte(got.Annotations["autoscaling.alpha.kubernetes.io/metrics"]), &others); err != nil ||
		len(others) != 2 || others[0].Resource == nil || others[0].Resource.Name != corev1.ResourceMemory ||
		others[1].ContainerResource == nil || others[1].ContainerResource.Container != "app" {
		t.Errorf("metrics annotation %q (%v)", got.Annotations["autoscaling.alpha.kubernetes.io/metrics"], err)
	}
	for _, a := range []string{"behavior", "current-metrics", "conditions"} {
		if got.Annotations["autoscaling.alpha.kubernetes.io/"+a] == "" {
			t.Errorf("no %s annotation in %v", a, got.Annotations)
		}
	}
	if !strings.Contains(got.Annotations["autoscaling.alpha.kubernetes.io/behavior"], `"StabilizationWindowSeconds":120`) {
		t.Errorf("behavior annotation %s", got.Annotations["autoscaling.alpha.kubernetes.io/behavior"])
	}

	// An update through v1 changes the CPU target and keeps the rest.
	u70 := int32(70)
	got.Spec.TargetCPUUtilizationPercentage = &u70
	got.Spec.MaxReplicas = 12
	if _, err := v1.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := v2.Get(ctx, "full", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := back.Spec.Metrics; len(m) != 3 || m[0].Resource.Name != corev1.ResourceMemory || m[1].ContainerResource == nil ||
		*m[2].Resource.Target.AverageUtilization != 70 || back.Spec.MaxReplicas != 12 {
		t.Errorf("v2 after a v1 update: %+v", back.Spec.Metrics)
	}
	if b := back.Spec.Behavior; b == nil || b.ScaleDown == nil || *b.ScaleDown.StabilizationWindowSeconds != 120 {
		t.Errorf("behavior after a v1 update: %+v", b)
	}
	if len(back.Status.Conditions) != 1 || back.Status.CurrentReplicas != 2 {
		t.Errorf("status after a v1 update: %+v", back.Status)
	}
	for k := range back.Annotations {
		if strings.HasPrefix(k, "autoscaling.alpha.kubernetes.io/") {
			t.Errorf("round-trip annotation %s stored", k)
		}
	}
	for _, want := range []string{"full", "full"} { // ADDED, then MODIFIED (status), MODIFIED (v1 update)
		ev := next(t, w)
		if ev.Object.(*autoscalingv1.HorizontalPodAutoscaler).Name != want {
			t.Errorf("v1 watch: %v %v", ev.Type, ev.Object)
		}
	}

	list, err := v1.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("v1 list: %v %v", list, err)
	}

	// Invalid through v1: v2's paths (minReplicas 0 is valid with an
	// Object or External metric, as HPAScaleToZero is on in v1.37).
	bad := int32(-1)
	_, err = v1.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MinReplicas: &bad, MaxReplicas: 0,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "x"}}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("invalid v1 HPA: %v", err)
	}
	var fields []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	if !strings.Contains(strings.Join(fields, ","), "spec.minReplicas") || !strings.Contains(strings.Join(fields, ","), "spec.maxReplicas") {
		t.Errorf("causes %v", fields)
	}

	if err := v1.Delete(ctx, "plain", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v2.Get(ctx, "plain", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a v1 delete, v2 get: %v", err)
	}
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}
	return watch.Event{}
}
