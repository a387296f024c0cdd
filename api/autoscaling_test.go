package api

import (
	"encoding/json"
	"reflect"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func behavior(s string) *HorizontalPodAutoscalerBehavior {
	b := new(HorizontalPodAutoscalerBehavior)
	if err := json.Unmarshal([]byte(s), b); err != nil {
		panic(err)
	}
	return b
}

// v2HPA has a CPU utilization target among other metrics, current
// metrics, a behavior and conditions: everything v1 keeps in annotations.
func v2HPA() *HorizontalPodAutoscaler {
	min := int32(2)
	gen := int64(3)
	return &HorizontalPodAutoscaler{
		TypeMeta:   TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v2"},
		ObjectMeta: ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{"keep": "me"}},
		Spec: HorizontalPodAutoscalerSpec{
			ScaleTargetRef: CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MinReplicas:    &min, MaxReplicas: 10,
			Metrics: []MetricSpec{
				{Type: "Resource", Resource: raw(`{"name":"memory","target":{"type":"AverageValue","averageValue":"200Mi"}}`)},
				{Type: "Resource", Resource: raw(`{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}`)},
				{Type: "Pods", Pods: raw(`{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"10"}}`)},
				{Type: "Object", Object: raw(`{"describedObject":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"target":{"type":"Value","value":"2k"},"metric":{"name":"hits"}}`)},
				{Type: "External", External: raw(`{"metric":{"name":"queue","selector":{"matchLabels":{"q":"a"}}},"target":{"type":"AverageValue","averageValue":"30"}}`)},
				{Type: "ContainerResource", ContainerResource: raw(`{"name":"cpu","target":{"type":"Utilization","averageUtilization":50},"container":"app"}`)},
			},
			Behavior: behavior(`{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15}]},"scaleDown":{"selectPolicy":"Min","policies":[{"type":"Percent","value":100,"periodSeconds":15}],"tolerance":"50m"}}`),
		},
		Status: HorizontalPodAutoscalerStatus{
			ObservedGeneration: &gen, CurrentReplicas: 3, DesiredReplicas: 4,
			CurrentMetrics: []MetricStatus{
				{Type: "Resource", Resource: raw(`{"name":"cpu","current":{"averageValue":"150m","averageUtilization":75}}`)},
				{Type: "Pods", Pods: raw(`{"metric":{"name":"qps"},"current":{"averageValue":"12"}}`)},
			},
			Conditions: []HorizontalPodAutoscalerCondition{{Type: "AbleToScale", Status: ConditionTrue,
				LastTransitionTime: Time{}, Reason: "ReadyForNewScale", Message: "recommended size matches current size"}},
		},
	}
}

// TestHPAToV1 checks the v1 view of a v2 HPA against what Kubernetes'
// conversion writes: the annotations are the JSON of k8s.io/api's v1
// metric types (and of the internal behavior type), and the CPU
// utilization target is the v1 field.
func TestHPAToV1(t *testing.T) {
	t.Parallel()
	v1 := HPAToV1(v2HPA())
	if v1.APIVersion != "autoscaling/v1" || v1.Spec.MaxReplicas != 10 || *v1.Spec.MinReplicas != 2 {
		t.Fatalf("spec not carried over: %+v", v1)
	}
	if p := v1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 60 {
		t.Errorf("targetCPUUtilizationPercentage = %v, want 60", p)
	}
	if p := v1.Status.CurrentCPUUtilizationPercentage; p == nil || *p != 75 {
		t.Errorf("currentCPUUtilizationPercentage = %v, want 75", p)
	}
	q := k8sresource.MustParse
	ptr := func(q k8sresource.Quantity) *k8sresource.Quantity { return &q }
	i32 := func(v int32) *int32 { return &v }
	wantMetrics := []autoscalingv1.MetricSpec{
		{Type: "Resource", Resource: &autoscalingv1.ResourceMetricSource{Name: corev1.ResourceMemory, TargetAverageValue: ptr(q("200Mi"))}},
		{Type: "Pods", Pods: &autoscalingv1.PodsMetricSource{MetricName: "qps", TargetAverageValue: q("10")}},
		{Type: "Object", Object: &autoscalingv1.ObjectMetricSource{Target: autoscalingv1.CrossVersionObjectReference{Kind: "Ingress",
			Name: "main", APIVersion: "networking.k8s.io/v1"}, MetricName: "hits", TargetValue: q("2k")}},
		{Type: "External", External: &autoscalingv1.ExternalMetricSource{MetricName: "queue",
			MetricSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"q": "a"}}, TargetAverageValue: ptr(q("30"))}},
		{Type: "ContainerResource", ContainerResource: &autoscalingv1.ContainerResourceMetricSource{Name: corev1.ResourceCPU,
			TargetAverageUtilization: i32(50), Container: "app"}},
	}
	wantCurrent := []autoscalingv1.MetricStatus{
		{Type: "Resource", Resource: &autoscalingv1.ResourceMetricStatus{Name: corev1.ResourceCPU, CurrentAverageUtilization: i32(75),
			CurrentAverageValue: q("150m")}},
		{Type: "Pods", Pods: &autoscalingv1.PodsMetricStatus{MetricName: "qps", CurrentAverageValue: q("12")}},
	}
	wantConds := []autoscalingv1.HorizontalPodAutoscalerCondition{{Type: "AbleToScale", Status: corev1.ConditionTrue,
		Reason: "ReadyForNewScale", Message: "recommended size matches current size"}}
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := map[string]string{
		"keep":                      "me",
		HPAMetricSpecsAnnotation:    enc(wantMetrics),
		HPAMetricStatusesAnnotation: enc(wantCurrent),
		HPAConditionsAnnotation:     enc(wantConds),
		HPABehaviorAnnotation: `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],"Tolerance":null},` +
			`"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":"50m"}}`,
	}
	for k, v := range want {
		if got := v1.Annotations[k]; got != v {
			t.Errorf("annotation %s:\n got %s\nwant %s", k, got, v)
		}
	}
	if len(v1.Annotations) != len(want) {
		t.Errorf("annotations %v, want only %v", v1.Annotations, want)
	}
	// The v1 JSON is k8s.io/api's.
	var theirs autoscalingv1.HorizontalPodAutoscaler
	data, _ := json.Marshal(v1)
	if err := strictDecode(data, &theirs); err != nil {
		t.Fatalf("k8s.io/api rejects the v1 HPA: %v", err)
	}
	back, _ := json.Marshal(&theirs)
	if string(back) != string(data) {
		t.Errorf("encoding differs from k8s.io/api's:\n ours   %s\n theirs %s", data, back)
	}
}

// TestHPARoundTrip: v2 -> v1 -> v2 gives back the v2 HPA, its metrics in
// Kubernetes' order (the v1 CPU target last), and v1 annotations written
// by a client do not leak into v2.
func TestHPARoundTrip(t *testing.T) {
	t.Parallel()
	orig := v2HPA()
	got := HPAFromV1(HPAToV1(orig))
	want := v2HPA()
	// The CPU utilization target comes back after the annotation's metrics.
	cpu := want.Spec.Metrics[1]
	want.Spec.Metrics = append(append(want.Spec.Metrics[:1:1], want.Spec.Metrics[2:]...), cpu)
	norm := func(h *HorizontalPodAutoscaler) string {
		// Compare the JSON the sources stand for, not their spelling.
		b, _ := json.Marshal(h)
		var v any
		_ = json.Unmarshal(b, &v)
		out, _ := json.Marshal(v)
		return string(out)
	}
	if norm(got) != norm(want) {
		t.Errorf("round trip:\n got %s\nwant %s", norm(got), norm(want))
	}
	if !reflect.DeepEqual(orig, v2HPA()) {
		t.Error("HPAToV1 changed its argument")
	}
}

// TestHPAFromV1 covers a plain v1 HPA: its CPU target, the 80% default
// when it has none, and annotations a v2 reader never sees.
func TestHPAFromV1(t *testing.T) {
	t.Parallel()
	pct := int32(70)
	v1 := &HorizontalPodAutoscalerV1{ObjectMeta: ObjectMeta{Name: "a", Annotations: map[string]string{HPAToleranceUpAnnotation: "x"}},
		Spec: HorizontalPodAutoscalerSpecV1{ScaleTargetRef: CrossVersionObjectReferenceV1{Kind: "StatefulSet", Name: "db"},
			MaxReplicas: 3, TargetCPUUtilizationPercentage: &pct}}
	v2 := HPAFromV1(v1)
	if len(v2.Spec.Metrics) != 1 || string(v2.Spec.Metrics[0].Resource) != `{"name":"cpu","target":{"type":"Utilization","averageUtilization":70}}` {
		t.Errorf("metrics = %s", hpaJSON(v2.Spec.Metrics))
	}
	if v2.Annotations == nil || len(v2.Annotations) != 0 {
		t.Errorf("annotations = %v, want none (dropped)", v2.Annotations)
	}
	v1.Spec.TargetCPUUtilizationPercentage = nil
	v2 = HPAFromV1(v1)
	if len(v2.Spec.Metrics) != 1 || string(v2.Spec.Metrics[0].Resource) != `{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}` {
		t.Errorf("default metrics = %s", hpaJSON(v2.Spec.Metrics))
	}
}

func hpaJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
