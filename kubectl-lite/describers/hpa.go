package describers

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/minik8s/minik8s/api"
)

// describeHPA is kubectl's describeHorizontalPodAutoscalerV2: each metric
// with its current reading, the bounds, the behavior when given, the
// target's pods, the conditions and events. The HPA is read as
// k8s.io/api's type, whose metric sources and quantities print as kube's.
func describeHPA(w *prefixWriter, hpa *autoscalingv2.HorizontalPodAutoscaler, evs []api.Event, now time.Time) {
	w.write(level0, "Name:\t%s\n", hpa.Name)
	w.write(level0, "Namespace:\t%s\n", hpa.Namespace)
	w.labels("Labels", hpa.Labels)
	w.annotations("Annotations", hpa.Annotations)
	w.write(level0, "CreationTimestamp:\t%s\n", hpa.CreationTimestamp.Time.Format(time.RFC1123Z))
	w.write(level0, "Reference:\t%s/%s\n", hpa.Spec.ScaleTargetRef.Kind, hpa.Spec.ScaleTargetRef.Name)
	w.write(level0, "Metrics:\t( current / target )\n")
	current := func(i int) *autoscalingv2.MetricStatus {
		if len(hpa.Status.CurrentMetrics) > i {
			return &hpa.Status.CurrentMetrics[i]
		}
		return nil
	}
	for i, m := range hpa.Spec.Metrics {
		cur := current(i)
		now := "<unknown>"
		switch m.Type {
		case autoscalingv2.ExternalMetricSourceType:
			if m.External.Target.AverageValue != nil {
				if cur != nil && cur.External != nil && cur.External.Current.AverageValue != nil {
					now = cur.External.Current.AverageValue.String()
				}
				w.write(level1, "%q (target average value):\t%s / %s\n", m.External.Metric.Name, now, m.External.Target.AverageValue.String())
			} else {
				if cur != nil && cur.External != nil {
					now = cur.External.Current.Value.String()
				}
				w.write(level1, "%q (target value):\t%s / %s\n", m.External.Metric.Name, now, m.External.Target.Value.String())
			}
		case autoscalingv2.PodsMetricSourceType:
			if cur != nil && cur.Pods != nil {
				now = cur.Pods.Current.AverageValue.String()
			}
			w.write(level1, "%q on pods:\t%s / %s\n", m.Pods.Metric.Name, now, m.Pods.Target.AverageValue.String())
		case autoscalingv2.ObjectMetricSourceType:
			w.write(level1, "\"%s\" on %s/%s ", m.Object.Metric.Name, m.Object.DescribedObject.Kind, m.Object.DescribedObject.Name)
			if m.Object.Target.Type == autoscalingv2.AverageValueMetricType {
				if cur != nil && cur.Object != nil {
					now = cur.Object.Current.AverageValue.String()
				}
				w.write(level0, "(target average value):\t%s / %s\n", now, m.Object.Target.AverageValue.String())
			} else {
				if cur != nil && cur.Object != nil {
					now = cur.Object.Current.Value.String()
				}
				w.write(level0, "(target value):\t%s / %s\n", now, m.Object.Target.Value.String())
			}
		case autoscalingv2.ResourceMetricSourceType:
			w.write(level1, "resource %s on pods", string(m.Resource.Name))
			var status *autoscalingv2.MetricValueStatus
			if cur != nil && cur.Resource != nil {
				status = &cur.Resource.Current
			}
			resourceMetric(w, m.Resource.Target, status)
		case autoscalingv2.ContainerResourceMetricSourceType:
			w.write(level1, "resource %s of container \"%s\" on pods", string(m.ContainerResource.Name), m.ContainerResource.Container)
			var status *autoscalingv2.MetricValueStatus
			if cur != nil && cur.ContainerResource != nil {
				status = &cur.ContainerResource.Current
			}
			resourceMetric(w, m.ContainerResource.Target, status)
		default:
			w.write(level1, "<unknown metric type %q>\n", string(m.Type))
		}
	}
	minReplicas := "<unset>"
	if hpa.Spec.MinReplicas != nil {
		minReplicas = fmt.Sprintf("%d", *hpa.Spec.MinReplicas)
	}
	w.write(level0, "Min replicas:\t%s\n", minReplicas)
	w.write(level0, "Max replicas:\t%d\n", hpa.Spec.MaxReplicas)
	if b := hpa.Spec.Behavior; b != nil {
		w.write(level0, "Behavior:\n")
		directionBehavior(w, "Scale Up", b.ScaleUp)
		directionBehavior(w, "Scale Down", b.ScaleDown)
	}
	w.write(level0, "%s pods:\t", hpa.Spec.ScaleTargetRef.Kind)
	w.write(level0, "%d current / %d desired\n", hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas)
	if len(hpa.Status.Conditions) > 0 {
		w.write(level0, "Conditions:\n")
		w.write(level1, "Type\tStatus\tReason\tMessage\n")
		w.write(level1, "----\t------\t------\t-------\n")
		for _, c := range hpa.Status.Conditions {
			w.write(level1, "%v\t%v\t%v\t%v\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	w.events(evs, now)
}

// resourceMetric ends a (container) resource metric's line: an average
// value target, or a utilization one ("<auto>" when unset).
func resourceMetric(w *prefixWriter, target autoscalingv2.MetricTarget, cur *autoscalingv2.MetricValueStatus) {
	now := "<unknown>"
	if target.AverageValue != nil {
		if cur != nil {
			now = cur.AverageValue.String()
		}
		w.write(level0, ":\t%s / %s\n", now, target.AverageValue.String())
		return
	}
	if cur != nil && cur.AverageUtilization != nil {
		now = fmt.Sprintf("%d%% (%s)", *cur.AverageUtilization, cur.AverageValue.String())
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	w.write(level1, "(as a percentage of request):\t%s / %s\n", now, want)
}

func directionBehavior(w *prefixWriter, direction string, rules *autoscalingv2.HPAScalingRules) {
	if rules == nil {
		return
	}
	w.write(level1, "%s:\n", direction)
	if rules.StabilizationWindowSeconds != nil {
		w.write(level2, "Stabilization Window: %d seconds\n", *rules.StabilizationWindowSeconds)
	}
	if len(rules.Policies) > 0 {
		policy := autoscalingv2.MaxChangePolicySelect
		if rules.SelectPolicy != nil {
			policy = *rules.SelectPolicy
		}
		w.write(level2, "Select Policy: %s\n", policy)
		w.write(level2, "Policies:\n")
		for _, p := range rules.Policies {
			w.write(level3, "- Type: %s\tValue: %d\tPeriod: %d seconds\n", p.Type, p.Value, p.PeriodSeconds)
		}
	}
}
