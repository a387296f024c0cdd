// Package registry implements Kubernetes' REST semantics for each served
// resource on top of etcd and the watch cache: create with generateName, uid
// and creationTimestamp; optimistic-concurrency updates that never turn a
// conflict into an overwrite; generation bumped on spec changes only; the
// status subresource; graceful deletion, finalizers and propagation
// finalizers; merge, strategic-merge and JSON patches; server-side apply
// and managedFields on every write (through package fieldmanager); and the per-kind
// strategies (defaulting, validation, selectable fields, pod binding,
// deployment and replicaset scale, namespace finalize). kinds.go holds the
// table of what each kind does besides the defaults: its strategy and, for
// a kind kept in etcd as another, its storage version.
package registry
