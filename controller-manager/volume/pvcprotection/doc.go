// Package pvcprotection is kube-controller-manager's "pvc-protection"
// controller: a PersistentVolumeClaim carries the
// kubernetes.io/pvc-protection finalizer (added here to claims created
// without it), and a claim being deleted keeps it while a pod that has not
// terminated uses the claim, so that a volume in use never loses its
// claim. Whether a pod uses it is asked of the pod cache, then, when the
// cache says no, of the apiserver (the cache may not have seen a pod just
// created), as kube does.
package pvcprotection
