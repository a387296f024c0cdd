// Package podroutes gives a host host-gateway pod networking: for every Node
// (but the host's own, when the host is a node) it keeps a kernel route to
// that node's spec.podCIDR via the node's InternalIP, so that the host
// reaches pods on other nodes without NAT. The kubelet runs it on every
// node (--pod-routes); the apiserver runs it too when its host is not a node
// (--pod-routes), so that admission webhooks and aggregated APIs served by
// pods are reached at their pod IPs, as from a kubeadm control-plane node.
package podroutes
