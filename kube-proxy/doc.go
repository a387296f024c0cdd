// Command kube-proxy is minik8s's node network agent, as Kubernetes'
// kube-proxy: it keeps the node's service rules (ClusterIPs, node ports,
// external and load-balancer addresses) in step with the Services and
// EndpointSlices, and beside them, with the same credentials
// (system:kube-proxy or the kube-system/kube-proxy ServiceAccount), the
// NetworkPolicy enforcer and the host-gateway routes to the other nodes'
// pod CIDRs. It runs apart from the kubelet (a host-network DaemonSet in
// the compose cluster, a systemd unit on machines), so it can be restarted
// or replaced without touching the node's pods. kube-proxy/app wires it.
package main
