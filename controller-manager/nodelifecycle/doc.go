// Package nodelifecycle is the node lifecycle controller: it watches Nodes
// and their heartbeat Leases in kube-node-lease, marks a node whose kubelet
// went silent for --node-monitor-grace-period Ready=Unknown, keeps the
// node.kubernetes.io/unreachable and not-ready NoExecute taints in line with
// the Ready condition (adding them at --node-eviction-rate nodes per second),
// and, as kube's taint-eviction controller, deletes pods on tainted nodes
// once their tolerations run out.
package nodelifecycle
