// Package app wires the kubelet: credentials (kubeconfig or bootstrap
// join), the containerd runtime, CNI networking, the pod manager, node
// registration and status, the HTTPS streaming server and the health and
// metrics endpoints, and runs them until the context ends.
package app
