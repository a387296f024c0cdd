package api

import (
	"bytes"
	"encoding/json"
	"maps"

	"github.com/minik8s/minik8s/api/resource"
)

// HorizontalPodAutoscalerV1 is the autoscaling/v1 HorizontalPodAutoscaler.
// Kubernetes keeps one storage for it and autoscaling/v2 (the storage
// version): a v1 HPA is a v2 HPA seen through HPAToV1 and HPAFromV1, its
// v2-only fields kept in annotations (its Go name differs only because
// package api holds every version).
type HorizontalPodAutoscalerV1 struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata"`
	Spec       HorizontalPodAutoscalerSpecV1   `json:"spec"`
	Status     HorizontalPodAutoscalerStatusV1 `json:"status"`
}

// HorizontalPodAutoscalerV1List is a list of autoscaling/v1 HPAs.
type HorizontalPodAutoscalerV1List = List[HorizontalPodAutoscalerV1]

// HorizontalPodAutoscalerSpecV1 is autoscaling/v1's spec: a CPU
// utilization target only.
type HorizontalPodAutoscalerSpecV1 struct {
	ScaleTargetRef                 CrossVersionObjectReferenceV1 `json:"scaleTargetRef"`
	MinReplicas                    *int32                        `json:"minReplicas,omitempty"`
	MaxReplicas                    int32                         `json:"maxReplicas"`
	TargetCPUUtilizationPercentage *int32                        `json:"targetCPUUtilizationPercentage,omitempty"`
}

// CrossVersionObjectReferenceV1 is autoscaling/v1's reference to the
// scaled object (the same fields as v2's).
type CrossVersionObjectReferenceV1 struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
}

// HorizontalPodAutoscalerStatusV1 is autoscaling/v1's status.
type HorizontalPodAutoscalerStatusV1 struct {
	ObservedGeneration              *int64 `json:"observedGeneration,omitempty"`
	LastScaleTime                   *Time  `json:"lastScaleTime,omitempty"`
	CurrentReplicas                 int32  `json:"currentReplicas"`
	DesiredReplicas                 int32  `json:"desiredReplicas"`
	CurrentCPUUtilizationPercentage *int32 `json:"currentCPUUtilizationPercentage,omitempty"`
}

// The annotations in which an autoscaling/v1 HPA carries what only v2 has,
// as Kubernetes names them (pkg/apis/autoscaling/annotations.go).
const (
	HPAMetricSpecsAnnotation    = "autoscaling.alpha.kubernetes.io/metrics"
	HPAMetricStatusesAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	HPAConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	HPABehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	HPAToleranceDownAnnotation  = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	HPAToleranceUpAnnotation    = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

// hpaRoundTripAnnotations are dropped from every HPA crossing versions,
// so that only the ones a conversion writes are seen.
var hpaRoundTripAnnotations = []string{HPAMetricSpecsAnnotation, HPABehaviorAnnotation, HPAToleranceDownAnnotation,
	HPAToleranceUpAnnotation, HPAMetricStatusesAnnotation, HPAConditionsAnnotation}

// DropHPARoundTripAnnotations returns in without the annotations in which
// autoscaling/v1 carries what only v2 has (a copy when it had any, nil
// staying nil): Kubernetes keeps none of them on the stored HPA, whichever
// version writes it.
func DropHPARoundTripAnnotations(in map[string]string) map[string]string {
	found := false
	for _, k := range hpaRoundTripAnnotations {
		_, ok := in[k]
		found = found || ok
	}
	if !found {
		return in
	}
	out := maps.Clone(in)
	for _, k := range hpaRoundTripAnnotations {
		delete(out, k)
	}
	return out
}

// The typed autoscaling/v2 metric sources (package api keeps them as raw
// JSON in MetricSpec and MetricStatus), in Kubernetes' field order.
type (
	// MetricTarget is autoscaling/v2's target of a metric: a Value, an
	// AverageValue or an average Utilization, as Type says.
	MetricTarget struct {
		Type               string             `json:"type"`
		Value              *resource.Quantity `json:"value,omitempty"`
		AverageValue       *resource.Quantity `json:"averageValue,omitempty"`
		AverageUtilization *int32             `json:"averageUtilization,omitempty"`
	}
	hpaMetricValue struct {
		Value              *resource.Quantity `json:"value,omitempty"`
		AverageValue       *resource.Quantity `json:"averageValue,omitempty"`
		AverageUtilization *int32             `json:"averageUtilization,omitempty"`
	}
	hpaMetricIdentifier struct {
		Name     string         `json:"name"`
		Selector *LabelSelector `json:"selector,omitempty"`
	}
	hpaObjectSource struct {
		DescribedObject CrossVersionObjectReference `json:"describedObject"`
		Target          MetricTarget                `json:"target"`
		Metric          hpaMetricIdentifier         `json:"metric"`
	}
	hpaMetricSource struct { // Pods and External
		Metric hpaMetricIdentifier `json:"metric"`
		Target MetricTarget        `json:"target"`
	}
	// ResourceMetricSource is autoscaling/v2's Resource metric: a target
	// for a resource (cpu, memory) of the pods' containers.
	ResourceMetricSource struct {
		Name   string       `json:"name"`
		Target MetricTarget `json:"target"`
	}
	hpaContainerResourceSource struct {
		Name      string       `json:"name"`
		Target    MetricTarget `json:"target"`
		Container string       `json:"container"`
	}
	hpaObjectStatus struct {
		Metric          hpaMetricIdentifier         `json:"metric"`
		Current         hpaMetricValue              `json:"current"`
		DescribedObject CrossVersionObjectReference `json:"describedObject"`
	}
	hpaMetricStatus struct { // Pods and External
		Metric  hpaMetricIdentifier `json:"metric"`
		Current hpaMetricValue      `json:"current"`
	}
	hpaResourceStatus struct {
		Name    string         `json:"name"`
		Current hpaMetricValue `json:"current"`
	}
	hpaContainerResourceStatus struct {
		Name      string         `json:"name"`
		Current   hpaMetricValue `json:"current"`
		Container string         `json:"container"`
	}
)

// The autoscaling/v1 metric shapes the annotations hold (v2beta1's).
type (
	hpaV1MetricSpec struct {
		Type              string                        `json:"type"`
		Object            *hpaV1ObjectSource            `json:"object,omitempty"`
		Pods              *hpaV1PodsSource              `json:"pods,omitempty"`
		Resource          *hpaV1ResourceSource          `json:"resource,omitempty"`
		ContainerResource *hpaV1ContainerResourceSource `json:"containerResource,omitempty"`
		External          *hpaV1ExternalSource          `json:"external,omitempty"`
	}
	hpaV1ObjectSource struct {
		Target       CrossVersionObjectReference `json:"target"`
		MetricName   string                      `json:"metricName"`
		TargetValue  resource.Quantity           `json:"targetValue"`
		Selector     *LabelSelector              `json:"selector,omitempty"`
		AverageValue *resource.Quantity          `json:"averageValue,omitempty"`
	}
	hpaV1PodsSource struct {
		MetricName         string            `json:"metricName"`
		TargetAverageValue resource.Quantity `json:"targetAverageValue"`
		Selector           *LabelSelector    `json:"selector,omitempty"`
	}
	hpaV1ResourceSource struct {
		Name                     string             `json:"name"`
		TargetAverageUtilization *int32             `json:"targetAverageUtilization,omitempty"`
		TargetAverageValue       *resource.Quantity `json:"targetAverageValue,omitempty"`
	}
	hpaV1ContainerResourceSource struct {
		Name                     string             `json:"name"`
		TargetAverageUtilization *int32             `json:"targetAverageUtilization,omitempty"`
		TargetAverageValue       *resource.Quantity `json:"targetAverageValue,omitempty"`
		Container                string             `json:"container"`
	}
	hpaV1ExternalSource struct {
		MetricName         string             `json:"metricName"`
		MetricSelector     *LabelSelector     `json:"metricSelector,omitempty"`
		TargetValue        *resource.Quantity `json:"targetValue,omitempty"`
		TargetAverageValue *resource.Quantity `json:"targetAverageValue,omitempty"`
	}
	hpaV1MetricStatus struct {
		Type              string                        `json:"type"`
		Object            *hpaV1ObjectStatus            `json:"object,omitempty"`
		Pods              *hpaV1PodsStatus              `json:"pods,omitempty"`
		Resource          *hpaV1ResourceStatus          `json:"resource,omitempty"`
		ContainerResource *hpaV1ContainerResourceStatus `json:"containerResource,omitempty"`
		External          *hpaV1ExternalStatus          `json:"external,omitempty"`
	}
	hpaV1ObjectStatus struct {
		Target       CrossVersionObjectReference `json:"target"`
		MetricName   string                      `json:"metricName"`
		CurrentValue resource.Quantity           `json:"currentValue"`
		Selector     *LabelSelector              `json:"selector,omitempty"`
		AverageValue *resource.Quantity          `json:"averageValue,omitempty"`
	}
	hpaV1PodsStatus struct {
		MetricName          string            `json:"metricName"`
		CurrentAverageValue resource.Quantity `json:"currentAverageValue"`
		Selector            *LabelSelector    `json:"selector,omitempty"`
	}
	hpaV1ResourceStatus struct {
		Name                      string            `json:"name"`
		CurrentAverageUtilization *int32            `json:"currentAverageUtilization,omitempty"`
		CurrentAverageValue       resource.Quantity `json:"currentAverageValue"`
	}
	hpaV1ContainerResourceStatus struct {
		Name                      string            `json:"name"`
		CurrentAverageUtilization *int32            `json:"currentAverageUtilization,omitempty"`
		CurrentAverageValue       resource.Quantity `json:"currentAverageValue"`
		Container                 string            `json:"container"`
	}
	hpaV1ExternalStatus struct {
		MetricName          string             `json:"metricName"`
		MetricSelector      *LabelSelector     `json:"metricSelector,omitempty"`
		CurrentValue        resource.Quantity  `json:"currentValue"`
		CurrentAverageValue *resource.Quantity `json:"currentAverageValue,omitempty"`
	}
	// hpaV1Condition is autoscaling/v1's HorizontalPodAutoscalerCondition:
	// its lastTransitionTime is written even when unset (null).
	hpaV1Condition struct {
		Type               string          `json:"type"`
		Status             ConditionStatus `json:"status"`
		LastTransitionTime *Time           `json:"lastTransitionTime"`
		Reason             string          `json:"reason,omitempty"`
		Message            string          `json:"message,omitempty"`
		ObservedGeneration *int64          `json:"observedGeneration,omitempty"`
	}
)

// hpaInternalBehavior is Kubernetes' internal HorizontalPodAutoscalerBehavior,
// which its conversion marshals into the behavior annotation as is: Go
// field names, no omitempty.
type (
	hpaInternalBehavior struct {
		ScaleUp   *hpaInternalRules
		ScaleDown *hpaInternalRules
	}
	hpaInternalRules struct {
		StabilizationWindowSeconds *int32
		SelectPolicy               *string
		Policies                   []hpaInternalPolicy
		Tolerance                  *resource.Quantity
	}
	hpaInternalPolicy struct {
		Type          string
		Value         int32
		PeriodSeconds int32
	}
)

// HorizontalPodAutoscalerBehavior is autoscaling/v2's scaling behavior:
// the rules for scaling up and for scaling down.
type HorizontalPodAutoscalerBehavior struct {
	ScaleUp   *HPAScalingRules `json:"scaleUp,omitempty"`
	ScaleDown *HPAScalingRules `json:"scaleDown,omitempty"`
}

// HPAScalingRules are the rules of one scaling direction: a stabilization
// window, the policies (kube's +listType=atomic) and how one is chosen,
// and a tolerance.
type HPAScalingRules struct {
	StabilizationWindowSeconds *int32             `json:"stabilizationWindowSeconds,omitempty"`
	SelectPolicy               *string            `json:"selectPolicy,omitempty"`
	Policies                   []HPAScalingPolicy `json:"policies,omitempty"`
	Tolerance                  *resource.Quantity `json:"tolerance,omitempty"`
}

// HPAScalingPolicy allows Value pods (Type Pods) or percent of the current
// replicas (Percent) to change within PeriodSeconds.
type HPAScalingPolicy struct {
	Type          string `json:"type"`
	Value         int32  `json:"value"`
	PeriodSeconds int32  `json:"periodSeconds"`
}

func decodeInto[T any](raw json.RawMessage) *T {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	v := new(T)
	if json.Unmarshal(raw, v) != nil {
		return nil
	}
	return v
}

func encodeRaw(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// ResourceMetric is the MetricSpec of a Resource metric.
func ResourceMetric(src ResourceMetricSource) MetricSpec {
	return MetricSpec{Type: "Resource", Resource: encodeRaw(src)}
}

// cpuUtilizationTarget reports the CPU utilization target of m, if it is one.
func cpuUtilizationTarget(m MetricSpec) (*int32, bool) {
	if m.Type != "Resource" {
		return nil, false
	}
	r := decodeInto[ResourceMetricSource](m.Resource)
	if r == nil || r.Name != string(ResourceCPU) || r.Target.AverageUtilization == nil {
		return nil, false
	}
	return r.Target.AverageUtilization, true
}

// HPAToV1 is Kubernetes' conversion of an autoscaling/v2 HPA to v1 (through
// its internal version): a CPU utilization metric is the v1 target, the
// other metrics, the current metrics, the behavior and the conditions go
// to annotations. The result shares no memory with h.
func HPAToV1(h *HorizontalPodAutoscaler) *HorizontalPodAutoscalerV1 {
	c := DeepCopy(h)
	out := &HorizontalPodAutoscalerV1{
		TypeMeta:   TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v1"},
		ObjectMeta: c.ObjectMeta,
		Spec: HorizontalPodAutoscalerSpecV1{
			ScaleTargetRef: CrossVersionObjectReferenceV1(c.Spec.ScaleTargetRef),
			MinReplicas:    c.Spec.MinReplicas,
			MaxReplicas:    c.Spec.MaxReplicas,
		},
		Status: HorizontalPodAutoscalerStatusV1{
			ObservedGeneration: c.Status.ObservedGeneration,
			LastScaleTime:      c.Status.LastScaleTime,
			CurrentReplicas:    c.Status.CurrentReplicas,
			DesiredReplicas:    c.Status.DesiredReplicas,
		},
	}
	annotations := DropHPARoundTripAnnotations(out.Annotations)
	set := func(key string, v any) {
		if annotations == nil {
			annotations = map[string]string{}
		}
		b, _ := json.Marshal(v)
		annotations[key] = string(b)
	}

	var others []hpaV1MetricSpec
	for _, m := range c.Spec.Metrics {
		if u, ok := cpuUtilizationTarget(m); ok {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				v := *u
				out.Spec.TargetCPUUtilizationPercentage = &v
			}
			continue
		}
		others = append(others, metricSpecToV1(m))
	}
	for _, m := range c.Status.CurrentMetrics {
		if m.Type != "Resource" {
			continue
		}
		if r := decodeInto[hpaResourceStatus](m.Resource); r != nil && r.Name == string(ResourceCPU) && r.Current.AverageUtilization != nil {
			v := *r.Current.AverageUtilization
			out.Status.CurrentCPUUtilizationPercentage = &v
		}
	}
	if len(others) > 0 {
		set(HPAMetricSpecsAnnotation, others)
	}
	if len(c.Status.CurrentMetrics) > 0 {
		current := make([]hpaV1MetricStatus, len(c.Status.CurrentMetrics))
		for i, m := range c.Status.CurrentMetrics {
			current[i] = metricStatusToV1(m)
		}
		set(HPAMetricStatusesAnnotation, current)
	}
	if b := c.Spec.Behavior; b != nil {
		set(HPABehaviorAnnotation, hpaInternalBehavior{ScaleUp: rulesToInternal(b.ScaleUp), ScaleDown: rulesToInternal(b.ScaleDown)})
	}
	if len(c.Status.Conditions) > 0 {
		conds := make([]hpaV1Condition, len(c.Status.Conditions))
		for i, cond := range c.Status.Conditions {
			t := cond.LastTransitionTime
			conds[i] = hpaV1Condition{Type: cond.Type, Status: cond.Status, LastTransitionTime: &t, Reason: cond.Reason,
				Message: cond.Message, ObservedGeneration: cond.ObservedGeneration}
			if t.IsZero() {
				conds[i].LastTransitionTime = nil
			}
		}
		set(HPAConditionsAnnotation, conds)
	}
	out.Annotations = annotations
	return out
}

// HPAFromV1 is Kubernetes' conversion of an autoscaling/v1 HPA to v2, the
// inverse of HPAToV1: the annotations give back the metrics, current
// metrics, behavior and conditions (and are dropped); an HPA without any
// metric targets 80% CPU utilization. The result shares no memory with h.
func HPAFromV1(h *HorizontalPodAutoscalerV1) *HorizontalPodAutoscaler {
	c := DeepCopy(h)
	out := &HorizontalPodAutoscaler{
		TypeMeta:   TypeMeta{Kind: "HorizontalPodAutoscaler", APIVersion: "autoscaling/v2"},
		ObjectMeta: c.ObjectMeta,
		Spec: HorizontalPodAutoscalerSpec{
			ScaleTargetRef: CrossVersionObjectReference(c.Spec.ScaleTargetRef),
			MinReplicas:    c.Spec.MinReplicas,
			MaxReplicas:    c.Spec.MaxReplicas,
		},
		Status: HorizontalPodAutoscalerStatus{
			ObservedGeneration: c.Status.ObservedGeneration,
			LastScaleTime:      c.Status.LastScaleTime,
			CurrentReplicas:    c.Status.CurrentReplicas,
			DesiredReplicas:    c.Status.DesiredReplicas,
		},
	}
	cpu := func(u int32) MetricSpec {
		return ResourceMetric(ResourceMetricSource{Name: string(ResourceCPU), Target: MetricTarget{Type: "Utilization", AverageUtilization: &u}})
	}
	if t := c.Spec.TargetCPUUtilizationPercentage; t != nil {
		out.Spec.Metrics = []MetricSpec{cpu(*t)}
	}
	if u := c.Status.CurrentCPUUtilizationPercentage; u != nil {
		v := *u
		out.Status.CurrentMetrics = []MetricStatus{{Type: "Resource",
			Resource: encodeRaw(hpaResourceStatus{Name: string(ResourceCPU), Current: hpaMetricValue{AverageUtilization: &v}})}}
	}
	ann := c.Annotations
	if enc, ok := ann[HPAMetricSpecsAnnotation]; ok {
		var others []hpaV1MetricSpec
		if json.Unmarshal([]byte(enc), &others) == nil {
			metrics := make([]MetricSpec, 0, len(others)+1)
			for _, m := range others {
				metrics = append(metrics, metricSpecFromV1(m))
			}
			metrics = append(metrics, out.Spec.Metrics...)
			out.Spec.Metrics = metrics
		}
	}
	if enc, ok := ann[HPABehaviorAnnotation]; ok {
		var b hpaInternalBehavior
		if json.Unmarshal([]byte(enc), &b) == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = &HorizontalPodAutoscalerBehavior{ScaleUp: rulesFromInternal(b.ScaleUp), ScaleDown: rulesFromInternal(b.ScaleDown)}
		}
	}
	if enc, ok := ann[HPAMetricStatusesAnnotation]; ok {
		var current []hpaV1MetricStatus
		if json.Unmarshal([]byte(enc), &current) == nil {
			out.Status.CurrentMetrics = make([]MetricStatus, len(current))
			for i, m := range current {
				out.Status.CurrentMetrics[i] = metricStatusFromV1(m)
			}
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []MetricSpec{cpu(80)}
	}
	if enc, ok := ann[HPAConditionsAnnotation]; ok {
		var conds []hpaV1Condition
		if json.Unmarshal([]byte(enc), &conds) == nil {
			out.Status.Conditions = make([]HorizontalPodAutoscalerCondition, len(conds))
			for i, cond := range conds {
				out.Status.Conditions[i] = HorizontalPodAutoscalerCondition{Type: cond.Type, Status: cond.Status,
					Reason: cond.Reason, Message: cond.Message, ObservedGeneration: cond.ObservedGeneration}
				if cond.LastTransitionTime != nil {
					out.Status.Conditions[i].LastTransitionTime = *cond.LastTransitionTime
				}
			}
		}
	}
	out.Annotations = DropHPARoundTripAnnotations(ann)
	return out
}

func rulesToInternal(r *HPAScalingRules) *hpaInternalRules {
	if r == nil {
		return nil
	}
	out := &hpaInternalRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
	if r.Policies != nil {
		out.Policies = make([]hpaInternalPolicy, len(r.Policies))
		for i, p := range r.Policies {
			out.Policies[i] = hpaInternalPolicy(p)
		}
	}
	return out
}

func rulesFromInternal(r *hpaInternalRules) *HPAScalingRules {
	if r == nil {
		return nil
	}
	out := &HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
	if r.Policies != nil {
		out.Policies = make([]HPAScalingPolicy, len(r.Policies))
		for i, p := range r.Policies {
			out.Policies[i] = HPAScalingPolicy(p)
		}
	}
	return out
}

// metricSpecToV1 is Convert_autoscaling_MetricSpec_To_v1_MetricSpec.
func metricSpecToV1(m MetricSpec) hpaV1MetricSpec {
	out := hpaV1MetricSpec{Type: m.Type}
	if s := decodeInto[hpaObjectSource](m.Object); s != nil {
		o := &hpaV1ObjectSource{Target: s.DescribedObject, MetricName: s.Metric.Name, Selector: s.Metric.Selector,
			AverageValue: s.Target.AverageValue}
		if s.Target.Value != nil {
			o.TargetValue = *s.Target.Value
		}
		out.Object = o
	}
	if s := decodeInto[hpaMetricSource](m.Pods); s != nil {
		p := &hpaV1PodsSource{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Target.AverageValue != nil {
			p.TargetAverageValue = *s.Target.AverageValue
		}
		out.Pods = p
	}
	if s := decodeInto[ResourceMetricSource](m.Resource); s != nil {
		out.Resource = &hpaV1ResourceSource{Name: s.Name, TargetAverageUtilization: s.Target.AverageUtilization,
			TargetAverageValue: s.Target.AverageValue}
	}
	if s := decodeInto[hpaContainerResourceSource](m.ContainerResource); s != nil {
		out.ContainerResource = &hpaV1ContainerResourceSource{Name: s.Name, TargetAverageUtilization: s.Target.AverageUtilization,
			TargetAverageValue: s.Target.AverageValue, Container: s.Container}
	}
	if s := decodeInto[hpaMetricSource](m.External); s != nil {
		out.External = &hpaV1ExternalSource{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector,
			TargetValue: s.Target.Value, TargetAverageValue: s.Target.AverageValue}
	}
	return out
}

// metricSpecFromV1 is Convert_v1_MetricSpec_To_autoscaling_MetricSpec.
func metricSpecFromV1(m hpaV1MetricSpec) MetricSpec {
	out := MetricSpec{Type: m.Type}
	if s := m.Object; s != nil {
		t := MetricTarget{Type: "Value", AverageValue: s.AverageValue}
		v := s.TargetValue
		if s.AverageValue == nil {
			t.Value = &v
		} else {
			// Only a non-zero value is kept beside an average: v1 cannot
			// omit it, and a zero would not validate.
			t.Type = "AverageValue"
			if !v.IsZero() {
				t.Value = &v
			}
		}
		out.Object = encodeRaw(hpaObjectSource{DescribedObject: s.Target, Target: t,
			Metric: hpaMetricIdentifier{Name: s.MetricName, Selector: s.Selector}})
	}
	if s := m.Pods; s != nil {
		v := s.TargetAverageValue
		out.Pods = encodeRaw(hpaMetricSource{Metric: hpaMetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: MetricTarget{Type: "AverageValue", AverageValue: &v}})
	}
	if s := m.Resource; s != nil {
		t := MetricTarget{Type: "AverageValue", AverageValue: s.TargetAverageValue, AverageUtilization: s.TargetAverageUtilization}
		if s.TargetAverageUtilization != nil {
			t.Type = "Utilization"
		}
		out.Resource = encodeRaw(ResourceMetricSource{Name: s.Name, Target: t})
	}
	if s := m.ContainerResource; s != nil {
		t := MetricTarget{Type: "AverageValue", AverageValue: s.TargetAverageValue, AverageUtilization: s.TargetAverageUtilization}
		if s.TargetAverageUtilization != nil {
			t.Type = "Utilization"
		}
		out.ContainerResource = encodeRaw(hpaContainerResourceSource{Name: s.Name, Target: t, Container: s.Container})
	}
	if s := m.External; s != nil {
		t := MetricTarget{Type: "AverageValue", Value: s.TargetValue, AverageValue: s.TargetAverageValue}
		if s.TargetValue != nil {
			t.Type = "Value"
		}
		out.External = encodeRaw(hpaMetricSource{Metric: hpaMetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector}, Target: t})
	}
	return out
}

// metricStatusToV1 is Convert_autoscaling_MetricStatus_To_v1_MetricStatus.
func metricStatusToV1(m MetricStatus) hpaV1MetricStatus {
	out := hpaV1MetricStatus{Type: m.Type}
	if s := decodeInto[hpaObjectStatus](m.Object); s != nil {
		o := &hpaV1ObjectStatus{Target: s.DescribedObject, MetricName: s.Metric.Name, Selector: s.Metric.Selector,
			AverageValue: s.Current.AverageValue}
		if s.Current.Value != nil {
			o.CurrentValue = *s.Current.Value
		}
		out.Object = o
	}
	if s := decodeInto[hpaMetricStatus](m.Pods); s != nil {
		p := &hpaV1PodsStatus{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Current.AverageValue != nil {
			p.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Pods = p
	}
	if s := decodeInto[hpaResourceStatus](m.Resource); s != nil {
		r := &hpaV1ResourceStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			r.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Resource = r
	}
	if s := decodeInto[hpaContainerResourceStatus](m.ContainerResource); s != nil {
		r := &hpaV1ContainerResourceStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization, Container: s.Container}
		if s.Current.AverageValue != nil {
			r.CurrentAverageValue = *s.Current.AverageValue
		}
		out.ContainerResource = r
	}
	if s := decodeInto[hpaMetricStatus](m.External); s != nil {
		e := &hpaV1ExternalStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, CurrentAverageValue: s.Current.AverageValue}
		if s.Current.Value != nil {
			e.CurrentValue = *s.Current.Value
		}
		out.External = e
	}
	return out
}

// metricStatusFromV1 is Convert_v1_MetricStatus_To_autoscaling_MetricStatus.
func metricStatusFromV1(m hpaV1MetricStatus) MetricStatus {
	out := MetricStatus{Type: m.Type}
	if s := m.Object; s != nil {
		v := s.CurrentValue
		out.Object = encodeRaw(hpaObjectStatus{Metric: hpaMetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: hpaMetricValue{Value: &v, AverageValue: s.AverageValue}, DescribedObject: s.Target})
	}
	if s := m.Pods; s != nil {
		v := s.CurrentAverageValue
		out.Pods = encodeRaw(hpaMetricStatus{Metric: hpaMetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: hpaMetricValue{AverageValue: &v}})
	}
	if s := m.Resource; s != nil {
		v := s.CurrentAverageValue
		out.Resource = encodeRaw(hpaResourceStatus{Name: s.Name, Current: hpaMetricValue{AverageValue: &v, AverageUtilization: s.CurrentAverageUtilization}})
	}
	if s := m.ContainerResource; s != nil {
		v := s.CurrentAverageValue
		out.ContainerResource = encodeRaw(hpaContainerResourceStatus{Name: s.Name,
			Current: hpaMetricValue{AverageValue: &v, AverageUtilization: s.CurrentAverageUtilization}, Container: s.Container})
	}
	if s := m.External; s != nil {
		v := s.CurrentValue
		out.External = encodeRaw(hpaMetricStatus{Metric: hpaMetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Current: hpaMetricValue{Value: &v, AverageValue: s.CurrentAverageValue}})
	}
	return out
}
