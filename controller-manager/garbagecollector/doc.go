// Package garbagecollector is kube's garbage collector: it watches the
// metadata of every resource, keeps a graph of ownerReferences, deletes
// dependents whose owners are all gone (background propagation), deletes the
// dependents of an owner held by the foregroundDeletion finalizer before
// removing that finalizer (foreground), and strips the ownerReferences of an
// owner held by the orphan finalizer from its dependents (orphan).
package garbagecollector
