// Package ephemeral is kube-controller-manager's "ephemeral-volume"
// controller: for every generic ephemeral volume of a pod
// (volumes[].ephemeral.volumeClaimTemplate) it creates the
// PersistentVolumeClaim named POD-VOLUME from the template (its labels,
// annotations and spec), controlled by the pod (a controller owner
// reference with blockOwnerDeletion), so that the garbage collector
// deletes the claim with the pod. A claim of that name the pod does not
// control is never taken over: the pod gets a FailedBinding event and the
// scheduler and the kubelet refuse the claim. A claim deleted while its
// pod lives is made again. Pods being deleted are left alone, and pod
// updates are ignored (a pod's volumes are immutable), as in kube.
package ephemeral
