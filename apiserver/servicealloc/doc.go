// Package servicealloc hands out Service ClusterIPs from
// --service-cluster-ip-range and NodePorts from --service-node-port-range,
// one etcd key per allocated address or port (like Kubernetes' IPAddress
// objects), so two apiservers can never give the same value twice.
package servicealloc
