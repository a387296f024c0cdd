package podautoscaler

import (
	"math"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// Legacy limits without spec.behavior (kube's scaleUpLimitFactor and
// scaleUpLimitMinimum).
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

type recommendation struct {
	replicas int32
	at       time.Time
}

type scaleEvent struct {
	change   int32
	at       time.Time
	outdated bool
}

// history is what the controller remembers of each HPA between syncs, as
// kube's controller does in memory: recent recommendations (for the
// stabilization windows) and recent scale events (for the rate policies).
type history struct {
	mu              sync.Mutex
	recommendations map[string][]recommendation
	scaleUps        map[string][]scaleEvent
	scaleDowns      map[string][]scaleEvent
}

func newHistory() *history {
	return &history{recommendations: map[string][]recommendation{}, scaleUps: map[string][]scaleEvent{}, scaleDowns: map[string][]scaleEvent{}}
}

func (h *history) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.recommendations, key)
	delete(h.scaleUps, key)
	delete(h.scaleDowns, key)
}

// recordInitial remembers the current size as a first recommendation, so
// a new controller does not scale down at once (kube's
// recordInitialRecommendation).
func (h *history) recordInitial(key string, current int32, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.recommendations[key] == nil {
		h.recommendations[key] = []recommendation{{current, now}}
	}
}

// limit is the outcome of normalization: the replicas, and the
// AbleToScale and ScalingLimited reasons and messages.
type limit struct {
	replicas                      int32
	stabilizedTo                  int32 // the recommendation before the limits
	stabilized                    bool
	stabilizeReason, stabilizeMsg string
	limitReason, limitMsg         string
}

// stabilize is kube's stabilizeRecommendation (no behavior): the highest
// recommendation within the downscale window.
func (h *history) stabilize(key string, desired int32, window time.Duration, now time.Time) int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	best := desired
	cutoff := now.Add(-window)
	old := -1
	for i, r := range h.recommendations[key] {
		if r.at.Before(cutoff) {
			old = i
		} else if r.replicas > best {
			best = r.replicas
		}
	}
	if old >= 0 {
		h.recommendations[key][old] = recommendation{desired, now}
	} else {
		h.recommendations[key] = append(h.recommendations[key], recommendation{desired, now})
	}
	return best
}

// normalizeLegacy is kube's normalizeDesiredReplicas: stabilization over
// the downscale window, then min/max and a scale-up limit of twice the
// current size (at least 4).
func (h *history) normalizeLegacy(key string, current, desired, minR, maxR int32, window time.Duration, now time.Time) limit {
	st := h.stabilize(key, desired, window, now)
	l := limit{stabilized: st != desired, stabilizedTo: st, stabilizeReason: "ScaleDownStabilized",
		stabilizeMsg: "recent recommendations were higher than current one, applying the highest recent recommendation"}
	upLimit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	maxAllowed, reason, msg := maxR, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if maxR > upLimit {
		maxAllowed, reason, msg = upLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	switch {
	case st < minR:
		l.replicas, l.limitReason, l.limitMsg = minR, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	case st > maxAllowed:
		l.replicas, l.limitReason, l.limitMsg = maxAllowed, reason, msg
	default:
		l.replicas, l.limitReason, l.limitMsg = st, "DesiredWithinRange", "the desired count is within the acceptable range"
	}
	return l
}

// defaultBehavior fills what spec.behavior leaves out with kube's
// defaults (GenerateHPAScaleUpRules/ScaleDownRules; the scale-down window
// is the controller's --horizontal-pod-autoscaler-downscale-stabilization).
func defaultBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, downWindow time.Duration) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	out := b.DeepCopy()
	maxPolicy := autoscalingv2.MaxChangePolicySelect
	if out.ScaleUp == nil {
		out.ScaleUp = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleUp.StabilizationWindowSeconds == nil {
		zero := int32(0)
		out.ScaleUp.StabilizationWindowSeconds = &zero
	}
	if out.ScaleUp.SelectPolicy == nil {
		out.ScaleUp.SelectPolicy = &maxPolicy
	}
	if len(out.ScaleUp.Policies) == 0 {
		out.ScaleUp.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
	}
	if out.ScaleDown == nil {
		out.ScaleDown = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleDown.StabilizationWindowSeconds == nil {
		w := int32(downWindow.Seconds())
		out.ScaleDown.StabilizationWindowSeconds = &w
	}
	if out.ScaleDown.SelectPolicy == nil {
		out.ScaleDown.SelectPolicy = &maxPolicy
	}
	if len(out.ScaleDown.Policies) == 0 {
		out.ScaleDown.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
	}
	return out
}

// normalizeBehavior is kube's normalizeDesiredReplicasWithBehaviors:
// stabilization over both windows, then the scaling policies' rate and
// min/max.
func (h *history) normalizeBehavior(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minR, maxR int32, now time.Time) limit {
	h.mu.Lock()
	defer h.mu.Unlock()
	up, down := desired, desired
	upCut := now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCut := now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	old := -1
	for i, r := range h.recommendations[key] {
		if r.at.After(upCut) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCut) {
			down = max(down, r.replicas)
		}
		if r.at.Before(upCut) && r.at.Before(downCut) {
			old = i
		}
	}
	st := max(current, up)
	st = min(st, down)
	if old >= 0 {
		h.recommendations[key][old] = recommendation{desired, now}
	} else {
		h.recommendations[key] = append(h.recommendations[key], recommendation{desired, now})
	}
	l := limit{stabilized: st != desired, stabilizedTo: st, stabilizeReason: "ScaleUpStabilized",
		stabilizeMsg: "recent recommendations were lower than current one, applying the lowest recent recommendation"}
	if desired < current {
		l.stabilizeReason, l.stabilizeMsg = "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation"
	}
	l.replicas, l.limitReason, l.limitMsg = st, "DesiredWithinRange", "the desired count is within the acceptable range"
	switch {
	case st > current:
		upLimit := max(current, scaleUpLimit(current, h.scaleUps[key], h.scaleDowns[key], b.ScaleUp, now))
		maxAllowed, reason, msg := maxR, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
		if maxR > upLimit {
			maxAllowed, reason, msg = upLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
		}
		if st > maxAllowed {
			l.replicas, l.limitReason, l.limitMsg = maxAllowed, reason, msg
		}
	case st < current:
		downLimit := min(current, scaleDownLimit(current, h.scaleUps[key], h.scaleDowns[key], b.ScaleDown, now))
		minAllowed, reason, msg := minR, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
		if minR < downLimit {
			minAllowed, reason, msg = downLimit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
		}
		if st < minAllowed {
			l.replicas, l.limitReason, l.limitMsg = minAllowed, reason, msg
		}
	}
	return l
}

// changeInPeriod sums the changes of events within the last period.
func changeInPeriod(period int32, events []scaleEvent, now time.Time) int32 {
	cutoff := now.Add(-time.Duration(period) * time.Second)
	var n int32
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

func scaleUpLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := maxI, int32(math.MinInt32)
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = minI, math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(p.PeriodSeconds, ups, now) + changeInPeriod(p.PeriodSeconds, downs, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

func scaleDownLimit(current int32, ups, downs []scaleEvent, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pick, result := minI, int32(math.MaxInt32)
	if *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		pick, result = maxI, math.MinInt32
	}
	for _, p := range rules.Policies {
		start := current - changeInPeriod(p.PeriodSeconds, ups, now) + changeInPeriod(p.PeriodSeconds, downs, now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

func minI(a, b int32) int32 { return min(a, b) }
func maxI(a, b int32) int32 { return max(a, b) }

// recordScale remembers a rescale for the rate policies (with a behavior
// only, as kube), reusing a slot older than the longest policy period.
func (h *history) recordScale(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, from, to int32, now time.Time) {
	if b == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	events, rules, change := h.scaleUps, b.ScaleUp, to-from
	if to < from {
		events, rules, change = h.scaleDowns, b.ScaleDown, from-to
	}
	var longest int32
	for _, p := range rules.Policies {
		longest = max(longest, p.PeriodSeconds)
	}
	cutoff := now.Add(-time.Duration(longest) * time.Second)
	list := events[key]
	old := -1
	for i := range list {
		if list[i].at.Before(cutoff) {
			list[i].outdated = true
		}
		if list[i].outdated {
			old = i
		}
	}
	e := scaleEvent{change: change, at: now}
	if old >= 0 {
		list[old] = e
	} else {
		list = append(list, e)
	}
	events[key] = list
}
