// Package podautoscaler is the "horizontal-pod-autoscaling" controller:
// every sync period it reads each HorizontalPodAutoscaler's target through
// the scale subresource (Deployments, ReplicaSets, StatefulSets,
// ReplicationControllers, and any kind the apiserver serves /scale for),
// proposes a replica count per metric from the resource metrics API
// (metrics.k8s.io PodMetrics: Resource and ContainerResource metrics with
// Utilization or AverageValue targets), takes the largest, stabilizes and
// rate-limits it (spec.behavior, or the legacy rules without one), writes
// the scale, and records the status, the AbleToScale, ScalingActive and
// ScalingLimited conditions and the events as kube-controller-manager's
// HPA controller does, with its tolerance of 0.1.
//
// Pods, Object and External metrics need the custom and external metrics
// APIs, which minik8s does not serve: such a metric is reported invalid
// (ScalingActive False) with a message saying so.
package podautoscaler
