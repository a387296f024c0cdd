// Package fields implements Kubernetes field selectors
// (?fieldSelector=spec.nodeName=node-1,status.phase!=Succeeded): a set of
// selectable field values per object, a parser with Kubernetes' syntax and
// backslash escaping, and matching. Only =, == and != exist, ANDed with ','.
// Which field names a kind supports is decided by its storage, not here.
// Selectors are immutable and safe for concurrent use.
package fields
