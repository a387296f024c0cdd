// Package labels implements Kubernetes label sets and label selectors: the
// string syntax of ?labelSelector= ("app=web,tier!=db,env in (a,b),!canary"),
// the structured api.LabelSelector of workload specs, and matching a selector
// against an object's labels. Parsed selectors are immutable values and safe
// for concurrent use; matching allocates nothing, because the watch cache
// runs it for every event and every watcher.
package labels
