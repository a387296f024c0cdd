// Package cache is the thread-safe, indexed, in-memory store behind
// informers, and the listers controllers read it through.
//
// Objects are keyed "namespace/name" (just "name" for cluster-scoped
// objects), see MetaNamespaceKeyFunc. Named indexers map an object to index
// values so that ByIndex finds, say, all pods on a node without a scan; the
// NamespaceIndex is always present.
//
// OBJECTS IN A STORE ARE SHARED. Get, List, ByIndex and the listers return
// the very pointers the store holds, which other controllers of the process
// read at the same time. Never modify an object obtained from a store or a
// lister: copy it first (api.DeepCopy(obj)), modify the
// copy, and send the copy to the apiserver. The store itself never modifies
// the objects it is given, and callers must not modify an object after
// handing it to the store either.
package cache
