// Package autoscale implements "kubectl-lite autoscale": it creates an
// autoscaling/v2 HorizontalPodAutoscaler for a deployment, replica set,
// stateful set or replication controller, as kubectl autoscale does.
package autoscale
