package etcd

// CompactForTest exposes one compaction round.
var CompactForTest = compact
