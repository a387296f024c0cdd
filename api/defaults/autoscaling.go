package defaults

import (
	"github.com/minik8s/minik8s/api"
)

// hpaBehaviorDefaults fills a given behavior as Kubernetes'
// SetDefaults_HorizontalPodAutoscalerBehavior: scale-up at most 4 pods or
// 100% per 15 s with no window, scale-down 100% per 15 s (its window left
// to the controller's --horizontal-pod-autoscaler-downscale-stabilization),
// the Max policy; what the behavior gives is kept (an empty policy list
// too, for validation to refuse).
func hpaBehaviorDefaults(h *api.HorizontalPodAutoscaler) {
	b := h.Spec.Behavior
	if b == nil {
		return
	}
	fill := func(from *api.HPAScalingRules, def api.HPAScalingRules) *api.HPAScalingRules {
		if from == nil {
			return &def
		}
		if from.SelectPolicy != nil {
			def.SelectPolicy = from.SelectPolicy
		}
		if from.StabilizationWindowSeconds != nil {
			def.StabilizationWindowSeconds = from.StabilizationWindowSeconds
		}
		if from.Policies != nil {
			def.Policies = from.Policies
		}
		if from.Tolerance != nil {
			def.Tolerance = from.Tolerance
		}
		return &def
	}
	b.ScaleUp = fill(b.ScaleUp, api.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(0)), SelectPolicy: ptr("Max"),
		Policies: []api.HPAScalingPolicy{{Type: "Pods", Value: 4, PeriodSeconds: 15}, {Type: "Percent", Value: 100, PeriodSeconds: 15}}})
	b.ScaleDown = fill(b.ScaleDown, api.HPAScalingRules{SelectPolicy: ptr("Max"),
		Policies: []api.HPAScalingPolicy{{Type: "Percent", Value: 100, PeriodSeconds: 15}}})
}
