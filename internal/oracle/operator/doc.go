// Package operator is a small operator written the way operator authors
// write them, with controller-runtime: a Memcached custom resource whose
// reconciler keeps an owned Deployment in step with its spec and reports
// through the status subresource. Its test runs it against minik8s'
// apiserver with controller-runtime's default client settings (protobuf
// for built-in kinds, JSON for custom resources), leader election on a
// Lease, RBAC for a ServiceAccount, and the garbage collector of minik8s'
// controller-manager.
//
// It is a module of its own so that controller-runtime stays out of
// minik8s' dependencies; `make oracle` runs its test.
package operator
