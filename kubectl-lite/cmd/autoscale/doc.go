// Package autoscale implements "kubectl-lite autoscale": it creates an
// autoscaling/v2 HorizontalPodAutoscaler for a deployment, replica set,
// stateful set or replication controller named by arguments or -f files,
// falling back to autoscaling/v1 when v2 fails and the flags fit v1, with
// kubectl's flags, output and messages.
package autoscale
