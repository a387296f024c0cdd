// Package backoff is kube's per-key exponential back-off
// (k8s.io/client-go/util/flowcontrol.Backoff): the kubelet paces container
// restarts with it, the daemonset controller the replacement of failed
// daemon pods.
package backoff
