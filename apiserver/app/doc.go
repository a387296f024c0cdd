// Package app assembles the apiserver process: it starts or connects to
// etcd, builds one registry store (with its watch cache) per served resource,
// the admission chain and the HTTP server, creates the system namespaces,
// runs etcd compaction, and shuts everything down when its context ends.
// Start runs in named phases; what each starts is undone in reverse order,
// on shutdown or as soon as a later phase fails.
package app
