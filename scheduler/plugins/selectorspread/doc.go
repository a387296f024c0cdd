// Package selectorspread spreads the pods of one controller (the same
// controller ownerReference: ReplicaSet, Job, ...) across nodes and zones,
// after kube's SelectorSpread: fewer sibling pods on a node, and in its
// zone, score higher.
package selectorspread
