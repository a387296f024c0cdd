// Package syncloop is the rule-sync loop the node's rule writers share
// (the service proxy, the NetworkPolicy enforcer), as kube-proxy's
// BoundedFrequencyRunner: a sync when something changed (Kick), never
// sooner than a minimum period after the last one (bursts of changes, a
// rollout, cost one rewrite), a periodic resync and a periodic full
// rewrite, and a retry a second after a failed sync.
package syncloop
