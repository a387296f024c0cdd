// Package cacher is the apiserver's watch cache: for one resource it keeps
// the current objects and a ring of recent change events in memory, fed by a
// single etcd watch, and serves LIST and WATCH from memory so clients never
// open etcd watches of their own. The model is kube-apiserver's cacher
// (watchCache + cacheWatcher).
//
// The cacher works on bytes and callbacks, not kinds: Config.Decode turns a
// stored value into an *Object (its JSON with metadata.resourceVersion set,
// labels, selectable fields and an opaque decoded value), and
// Config.Bookmark renders the empty object of a BOOKMARK event.
//
// Run lists the prefix at one revision, then watches it from the next one.
// If that watch fails (etcd compacted past the cache, or it gave up), Run
// re-lists and, like Kubernetes, terminates every watcher rather than
// computing diffs: their channels close and clients re-watch from the last
// resourceVersion they saw, which is then served from etcd if it is older
// than the new cache (see below) or expires with 410.
//
// Lists (List). Results are sorted by key. ResourceVersion "0" reads what
// the cache has now. An unset resourceVersion (Consistent) first reads the
// store revision from etcd and waits, at most ConsistentReadTimeout, for the
// cache to reach it, so a list right after a write sees the write; if the
// cache does not catch up in time the list is served from etcd instead. A
// specific resourceVersion N waits until the cache is at least at N
// ("NotOlderThan") or fails with a 504 "Too large resource version".
// Paging (limit/continue) and exact-revision lists are not served here: the
// caller sends them to storage.List directly.
//
// Watches (Watch) follow Kubernetes' "Resource versions" rules: unset RV
// gives synthetic ADDED events for the current (consistent) state and then
// the changes; "0" the same from the cache's state; N every change after N,
// with no gap and no duplicate; SendInitialEvents=true gives ADDED events
// for the state at (at least) RV and then a BOOKMARK annotated
// "k8s.io/initial-events-end": "true". If N is older than the ring buffer
// the watcher is fed by an etcd watch of its own from N+1 (so a client
// resuming across an apiserver restart loses nothing) until it has caught
// up with what the ring holds, then joins the cache's watchers and the etcd
// watch ends (when a re-listed cache has terminated every watcher, all of
// them resume this way at once: each would otherwise keep an etcd watch of
// the whole prefix and decode every event of it); if etcd compacted N
// the stream is a single ERROR event carrying a 410 Expired Status "too old
// resource version: N (M)". If N is ahead of the cache the watch waits for
// it, or sends an ERROR event with a 504 Timeout Status.
//
// Selectors apply per watcher and transitions are visible: an object that
// stops matching arrives as DELETED (its previous content at the event's
// resourceVersion), one that starts matching as ADDED. Watchers are indexed
// by one exact field value (e.g. spec.nodeName), by name or by namespace, so
// a kubelet watching its own pods is not woken for every pod event.
//
// Each event's wire line ({"type":...,"object":...}\n) is encoded once per
// event type and shared by every watcher that gets it; Watcher.Events yields
// ready-to-write lines. A watcher whose buffer stays full for longer than
// SlowWatcherTimeout is terminated (its channel closes) instead of blocking
// the others, as in Kubernetes; its client re-watches from its last RV.
// An idle watcher has no goroutine: the dispatcher queues its lines into
// the Events channel itself, and a goroutine exists only while a backlog
// (initial or replayed events) is being sent.
package cacher
