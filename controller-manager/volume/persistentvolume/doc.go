// Package persistentvolume is kube-controller-manager's
// "persistentvolume-binder": it binds PersistentVolumeClaims to
// PersistentVolumes and runs the volumes' lifecycle, as kube's
// pkg/controller/volume/persistentvolume does.
//
// A claim without a volume gets the best match (its class, volume mode,
// access modes, selector, and the smallest capacity that fits, in the
// smallest access-mode set holding the claim's), or the volume it names in
// spec.volumeName, or the one whose claimRef names it; binding writes the
// volume's claimRef (pv.kubernetes.io/bound-by-controller when the
// controller chose it), the volume's phase Bound, the claim's
// spec.volumeName and pv.kubernetes.io/bind-completed, then the claim's
// phase Bound with the volume's capacity and access modes. A claim of a
// WaitForFirstConsumer class waits for the scheduler (which may pre-bind
// a volume itself or annotate volume.kubernetes.io/selected-node); a claim
// of a class with a provisioner is handed to that external provisioner
// (volume.kubernetes.io/storage-provisioner, an ExternalProvisioning
// event), whose volume, pre-bound to the claim, is then bound. A claim
// without a class gets the default class once one exists.
//
// Volumes are Available, Bound, Released (their claim is gone) or Failed;
// a Released volume is kept (Retain), left to the external provisioner
// that made it (Delete), deleted when it is a hostPath under /tmp (the
// only in-tree deleter kube has for the volumes minik8s serves), else
// marked Failed with kube's VolumeFailedDelete event. Recycle is refused:
// minik8s runs no recycler pods.
//
// Events come from "persistentvolume-controller" with kube's reasons and
// messages. Every claim and volume is synced again every
// --pvclaimbinder-sync-period (15 s), as in kube.
package persistentvolume
