package defaults

import (
	"bytes"
	"encoding/json"

	"github.com/minik8s/minik8s/api"
)

// hpaBehavior is autoscaling/v2's HorizontalPodAutoscalerBehavior, its
// fields in Kubernetes' order (package api keeps the behavior as raw JSON).
type hpaBehavior struct {
	ScaleUp   *hpaRules `json:"scaleUp,omitempty"`
	ScaleDown *hpaRules `json:"scaleDown,omitempty"`
}

type hpaRules struct {
	StabilizationWindowSeconds *int32          `json:"stabilizationWindowSeconds,omitempty"`
	SelectPolicy               *string         `json:"selectPolicy,omitempty"`
	Policies                   []hpaPolicy     `json:"policies"` // never nil once filled; kept when empty, for validation
	Tolerance                  json.RawMessage `json:"tolerance,omitempty"`
}

type hpaPolicy struct {
	Type          string `json:"type"`
	Value         int32  `json:"value"`
	PeriodSeconds int32  `json:"periodSeconds"`
}

// hpaBehaviorDefaults fills a given behavior as Kubernetes'
// SetDefaults_HorizontalPodAutoscalerBehavior: scale-up at most 4 pods or
// 100% per 15 s with no window, scale-down 100% per 15 s (its window left
// to the controller's --horizontal-pod-autoscaler-downscale-stabilization),
// the Max policy; what the behavior gives is kept. A behavior that does not
// decode is left for validation.
func hpaBehaviorDefaults(h *api.HorizontalPodAutoscaler) {
	raw := bytes.TrimSpace(h.Spec.Behavior)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return
	}
	var b hpaBehavior
	if err := json.Unmarshal(raw, &b); err != nil {
		return
	}
	maxPolicy := "Max"
	zero := int32(0)
	fill := func(from *hpaRules, def hpaRules) *hpaRules {
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
	b.ScaleUp = fill(b.ScaleUp, hpaRules{StabilizationWindowSeconds: &zero, SelectPolicy: &maxPolicy,
		Policies: []hpaPolicy{{"Pods", 4, 15}, {"Percent", 100, 15}}})
	b.ScaleDown = fill(b.ScaleDown, hpaRules{SelectPolicy: &maxPolicy, Policies: []hpaPolicy{{"Percent", 100, 15}}})
	if out, err := json.Marshal(b); err == nil {
		h.Spec.Behavior = out
	}
}
