// Package nodeunschedulable filters out cordoned nodes (spec.unschedulable)
// unless the pod tolerates the node.kubernetes.io/unschedulable taint.
package nodeunschedulable
