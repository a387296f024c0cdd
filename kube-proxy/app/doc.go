// Package app wires kube-proxy: its flags (kube-proxy's names and
// defaults, plus --run-firewall and --pod-routes), the service proxy
// (kubelet/proxy), the NetworkPolicy enforcer (kubelet/netpol) and the pod
// routes (internal/podroutes) on one shared informer factory, and the two
// servers kube-proxy has: health on --healthz-bind-address (/healthz and
// /livez answered with kube-proxy's JSON) and metrics on
// --metrics-bind-address.
package app
