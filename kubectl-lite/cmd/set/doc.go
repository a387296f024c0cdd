// Package set implements "kubectl-lite set image": it changes container
// images of pods and workloads with a strategic merge patch.
package set
