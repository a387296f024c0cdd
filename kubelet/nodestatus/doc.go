// Package nodestatus is the kubelet's node side: it registers the Node,
// keeps its status (capacity, allocatable, addresses, nodeInfo, conditions)
// current through nodes/NAME/status, and heartbeats with the node's Lease in
// kube-node-lease, the way the Kubernetes kubelet does.
package nodestatus
