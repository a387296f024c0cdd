// Package storage is the apiserver's byte-level, Kubernetes-shaped store on
// etcd: values are opaque bytes, versions are etcd revisions, and every write
// is one etcd transaction with a precondition (the model is etcd's
// client/v3/kubernetes interface and kube-apiserver's etcd3 store).
//
// Keys. Callers name objects by keys relative to the store's prefix, e.g.
// "pods/default/web"; the store adds the prefix ("/registry") and a slash,
// so the etcd key is "/registry/pods/default/web". Keys returned in KV and
// Event are relative too. List and Watch take a relative key prefix
// ("pods/" or "pods/default/").
//
// Writes. Create succeeds only if the key does not exist (ErrKeyExists).
// Update and Delete succeed only if the key's ModRevision is the expected
// revision, or, with expected revision 0, if the key exists at all; a
// mismatch is a *ConflictError carrying the current KV (or ErrNotFound if
// the key is gone). The store never retries a failed precondition.
//
// Reads. Get and List are linearizable. List reads one page of a prefix at
// one revision: pass the returned Revision and the next StartKey to read the
// following pages from the same snapshot (a *CompactedError once etcd has
// compacted that revision).
//
// Watch streams the changes of a prefix from a revision with the previous
// value of each key, plus progress events that carry the store revision
// while nothing changes (so an idle watch still learns how fresh it is).
//
// Errors are sentinels and types for errors.Is/As: ErrNotFound,
// ErrKeyExists, *ConflictError, *CompactedError, ErrRequestTooLarge and
// ErrUnavailable; the apiserver maps them to Status codes in one table.
package storage
