// Package storagevolume holds what PersistentVolumes, their claims and
// StorageClasses mean to every component that binds them (the scheduler's
// VolumeBinding plugin, the PersistentVolume controller, provisioners), as
// kube's k8s.io/component-helpers/storage/volume does: the annotations of
// the binding protocol, a claim's class, a claim matched to the smallest
// fitting volume, a volume's node affinity checked against a node, and the
// pre-binding of a volume to a claim.
package storagevolume
