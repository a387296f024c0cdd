// Package portforward implements "kubectl-lite port-forward": local ports
// carried to a pod's ports (a pod, or the first pod of a workload or a
// Service, whose ports are translated to the pod's) through the
// apiserver's pods/portforward subresource.
package portforward
