// Package vacprotection is kube-controller-manager's
// "volumeattributesclass-protection-controller": a VolumeAttributesClass
// carries the kubernetes.io/vac-protection finalizer (the
// StorageObjectInUseProtection admission adds it on create; this
// controller adds it to classes created without it), and a class being
// deleted keeps it while a PersistentVolume names it in
// spec.volumeAttributesClassName or a PersistentVolumeClaim names it in
// spec.volumeAttributesClassName, status.currentVolumeAttributesClassName
// or status.modifyVolumeStatus.targetVolumeAttributesClassName. Who uses
// a class is read from indexes on the shared volume and claim caches, as
// kube does.
package vacprotection
