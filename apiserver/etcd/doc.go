// Package etcd runs the apiserver's etcd: an embedded single-member server
// (the default, data kept in a directory and surviving restarts) or a client
// connection to an external cluster. It is the only place that configures
// go.etcd.io/etcd; everything else sees a *clientv3.Client through Backend.
//
// The apiserver's embedded server serves TLS only and requires client
// certificates of the etcd CA on its client and peer URLs (Config.ServerTLS
// and PeerTLS, from internal/pki's EnsureEtcd); a Config without them is
// plain HTTP, which only tests on loopback use (etcdtest).
//
// Config.Cluster makes the embedded server one member of a multi-member
// cluster (cluster.go): its name, advertise URLs and initial cluster as
// etcd's flags have them, or Join, with which Start adds the member to a
// running cluster itself (a member add, what kubeadm join --control-plane
// does) when its data directory is empty. Such a member's client then uses
// every member's client URL (synced from the member list) and pings its
// connections, so the apiserver fails over to another member when its own
// cannot answer. The zero value is the single member "minik8s".
//
// Start returns a Backend once etcd answers requests. Backend.Healthy backs
// the apiserver's health checks, Backend.RunCompactor compacts the history
// periodically the way kube-apiserver does (several apiservers sharing one
// etcd agree through a compare-and-swap on the "compact_rev_key" key, so only
// one of them compacts per interval), and Backend.Close stops everything.
//
// Backend.SaveSnapshot streams a snapshot (etcdctl snapshot save) into a
// file atomically; VerifySnapshot checks one (sha256, bbolt) and
// RestoreSnapshot turns one into an embedded server's data directory with
// etcdutl's restore, the revision bumped and compacted (apiserver/snapshot
// has the commands).
//
// The embedded server is tuned for a small idle footprint: no metrics
// listener, no gRPC gateway, a smaller raft snapshot interval so fewer raft
// entries are held in memory, no mlock, no etcd auto-compaction (RunCompactor
// does it), and its zap logging bridged to slog at error level (and muted
// during Close, where etcd reports its normal shutdown as errors).
// Measured with TestIdleRSS (see rss_test.go): a process holding an idle
// embedded etcd, a client and 500 small keys settles at about 31 MB RSS.
package etcd
