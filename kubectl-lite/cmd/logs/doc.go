// Package logs implements "kubectl-lite logs": it streams a container's
// log from the apiserver's pods/NAME/log subresource (proxied to the
// pod's kubelet).
package logs
