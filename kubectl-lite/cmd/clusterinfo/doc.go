// Package clusterinfo implements "kubectl-lite cluster-info": where the
// control plane of the current context is.
package clusterinfo
