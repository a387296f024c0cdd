// Package informer keeps a local, indexed cache of one kind in sync with the
// apiserver and tells handlers about changes, as client-go's shared informers
// do: it lists once, then watches from the list's resourceVersion, applying
// each event to a cache.Store before notifying handlers.
//
// The watch is resumed from the last resourceVersion seen (BOOKMARKs
// included) whenever it ends; a 410 Expired makes the informer list again,
// and objects that vanished between two lists are delivered to OnDelete with
// finalStateUnknown set. Failures back off exponentially with jitter (800 ms
// to 30 s), and a watch that ends at once without events counts as a failure,
// so an informer never hot-loops against a sick server.
//
// Each handler runs on its own goroutine fed by an unbounded buffer, so a
// slow handler delays only itself, never the watch or other handlers.
// Handlers receive the objects of the store: they must not modify them (see
// package cache). A Factory shares one informer per (kind, namespace,
// selectors) among the controllers of a process.
package informer
