// Package volumebinding is kube-scheduler's VolumeBinding plugin: a pod
// using PersistentVolumeClaims is placed only where its volumes can be.
//
// PreFilter rejects pods whose claims are missing, being deleted, lost, or
// unbound with Immediate binding (the PV controller binds those). Filter
// keeps the nodes satisfying the node affinity of the volumes already
// bound, and, for unbound WaitForFirstConsumer claims, the nodes where an
// Available volume matches each claim or the claim's class can provision.
// Reserve assumes the choice in the plugin's own caches (so the next pod
// does not take the same volume); PreBind, in the binding cycle, writes it
// to the API — spec.claimRef onto a chosen volume for the PV controller to
// complete, or the volume.kubernetes.io/selected-node annotation onto the
// claim for the provisioner — and waits, up to the bind timeout, until
// every claim is bound (bind-completed). A provisioner that gives up
// removes selected-node; PreBind then fails, Unreserve forgets the
// assumption, and the pod is retried.
package volumebinding
