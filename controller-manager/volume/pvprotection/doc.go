// Package pvprotection is kube-controller-manager's "pv-protection"
// controller: a PersistentVolume carries the kubernetes.io/pv-protection
// finalizer (added here to volumes created without it), and a volume
// being deleted keeps it while it is Bound to a claim.
package pvprotection
