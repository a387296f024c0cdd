// Package history keeps the ControllerRevisions of StatefulSets and
// DaemonSets, as kube's pkg/controller/history: a revision is an immutable
// snapshot (a patch replacing spec.template) named PARENT-HASH, labelled
// controller-revision-hash=HASH, numbered in creation order; a hash
// collision with a different snapshot bumps the parent's collisionCount.
package history
