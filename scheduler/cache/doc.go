// Package cache is the scheduler's own view of the cluster: a NodeInfo per
// node with the pods bound to it and the pods it has assumed there before
// their binding returned, and the Snapshot a scheduling cycle reads.
package cache
