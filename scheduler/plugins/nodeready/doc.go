// Package nodeready filters out nodes whose Ready condition is not True.
// Kubernetes does this through the node.kubernetes.io/not-ready taint the
// node lifecycle controller adds; checking the condition as well keeps a
// pod off a node that went NotReady before the taint landed. Pods that
// tolerate the not-ready taint (DaemonSet-style) may still go there.
package nodeready
