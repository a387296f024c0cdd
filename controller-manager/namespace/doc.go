// Package namespace is kube's namespace controller: for a namespace being
// deleted (phase Terminating) it deletes its pods, then, once none is
// left, every other namespaced object in it (kube v1.37's ordered
// namespace deletion), keeps kube's deletion conditions in the namespace's
// status, waits until the content is gone, and then removes the
// "kubernetes" finalizer through namespaces/NAME/finalize so that the
// apiserver can drop it.
package namespace
