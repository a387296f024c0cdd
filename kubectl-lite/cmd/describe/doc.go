// Package describe implements "kubectl-lite describe": a readable report of
// one object (pod, deployment, replicaset, node, service, or any kind as a
// generic field dump) with its events at the bottom, in kubectl's layout.
package describe
