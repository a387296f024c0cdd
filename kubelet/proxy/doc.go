// Package proxy is the node's service proxy, kube-proxy's iptables mode:
// it watches Services and EndpointSlices and programs the kernel so that
// ClusterIP:port and NodeIP:nodePort are load-balanced across ready
// endpoints, and answer "connection refused" when there are none.
package proxy
