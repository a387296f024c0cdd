// Package snapshot backs up and restores the apiserver's etcd.
//
// NewCommand is "apiserver snapshot": save (etcd's maintenance Snapshot API
// over the embedded server's client URL with the apiserver-etcd-client
// certificate of --cert-dir, or an external cluster's --etcd-servers; what
// `etcdctl snapshot save` does), restore (etcdutl's restore into an empty
// --data-dir, with the embedded server's member name and cluster token, the
// revision bumped and marked compacted so that clients' watches get 410 Gone
// and relist) and status (etcdutl snapshot status).
//
// Scheduled takes snapshots on a cron schedule and keeps the newest few, as
// k3s's --etcd-snapshot-schedule and --etcd-snapshot-retention do; the
// apiserver runs one. The files are named etcd-snapshot-NODE-UNIXTIME.
//
// The etcd packages themselves stay behind apiserver/etcd
// (Backend.SaveSnapshot, RestoreSnapshot, VerifySnapshot).
package snapshot
