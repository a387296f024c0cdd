// Package drain implements "kubectl-lite cordon", "uncordon" and "drain":
// marking nodes unschedulable and evicting (or, without the eviction API,
// deleting) their pods with kubectl's filters for DaemonSet, mirror,
// unmanaged and emptyDir pods.
package drain
