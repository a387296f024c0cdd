// Package nodevolumelimits is kube-scheduler's NodeVolumeLimits plugin
// (kube's CSILimits): a node whose CSINode gives a driver an allocatable
// count takes no pod that would bring the driver's unique volumes on the
// node (those of its pods, plus VolumeAttachments to it) over that count.
// Volumes are counted by "driver/volumeHandle" from the PersistentVolumes
// bound to the pods' claims (generic ephemeral volumes included); a claim
// not bound yet counts once against its StorageClass's provisioner.
// minik8s has no in-tree volume plugins, so there is nothing to migrate:
// inline volumes never count, as in kube for non-migratable ones.
package nodevolumelimits
