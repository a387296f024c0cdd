// Package namespace is kube's namespace controller: for a namespace being
// deleted (phase Terminating) it deletes every namespaced object in it,
// waits until they are gone, and then removes the "kubernetes" finalizer
// through namespaces/NAME/finalize so that the apiserver can drop it.
package namespace
