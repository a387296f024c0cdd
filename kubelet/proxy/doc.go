// Package proxy is the node's service proxy, kube-proxy's iptables and
// nftables modes (Config.Mode, kube-proxy's --proxy-mode): it watches
// Services and EndpointSlices and programs the kernel so that
// ClusterIP:port, NodeIP:nodePort, external IPs and load balancer
// addresses are load-balanced across ready endpoints, and answer
// "connection refused" when there are none. The iptables mode writes the
// nat and filter tables with iptables-restore; the nftables mode writes
// kube-proxy's table "kube-proxy" over netlink (github.com/google/nftables),
// one transaction per sync. Both modes compute the same model (model.go).
package proxy
