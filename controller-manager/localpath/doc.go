// Package localpath is the controller-manager's default dynamic
// provisioner, rancher/local-path-provisioner as k3s ships it (provisioner
// rancher.io/local-path, StorageClass local-path in deploy/addons), speaking
// the external-provisioner protocol of sig-storage-lib-external-provisioner.
//
// A claim annotated volume.kubernetes.io/storage-provisioner=rancher.io/local-path
// (by the PersistentVolume controller) whose class waits for the first
// consumer is provisioned once the scheduler annotated it
// volume.kubernetes.io/selected-node: a helper pod pinned to that node
// (nodeName, the image every node has) creates the directory
// ROOT/pvc-UID_NAMESPACE_NAME mode 0777 through a hostPath of its parent,
// then the provisioner creates the PersistentVolume pvc-UID: that hostPath
// (type DirectoryOrCreate, so the kubelet would also create it if it were
// gone), node affinity kubernetes.io/hostname In [node], the claim's
// capacity and access modes, the class's reclaim policy, claimRef to the
// claim and pv.kubernetes.io/provisioned-by, for the PersistentVolume
// controller to bind. Events on the claim are external-provisioner's:
// Provisioning, ProvisioningSucceeded, ProvisioningFailed.
//
// A volume it provisioned that is Released with reclaim policy Delete is
// deleted the same way: a helper pod on the volume's node removes the
// directory (rm -rf), then the PersistentVolume is deleted; a failure is a
// VolumeFailedDelete event on the volume, retried with back-off. A volume
// whose node no longer exists is deleted without cleanup, as rancher does.
//
// Its writes act as its own service account,
// kube-system/local-path-provisioner-service-account, whose token the
// controller-manager asks for (and renews) as kube-controller-manager does
// with --use-service-account-credentials; the add-on grants it k3s' rules.
// Its informers are the controller-manager's shared ones.
//
// The controller is level-based: one sync per claim or volume reads the
// caches, starts or checks the helper pod (whose events requeue the claim
// or volume it works for) and never blocks a worker while the pod runs. A
// helper pod that fails, or has not succeeded after 120 s, is deleted and
// the step retried.
package localpath
