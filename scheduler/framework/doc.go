// Package framework is the scheduler's plugin contract, after kube-scheduler's
// scheduling framework: the per-node view plugins see (NodeInfo, PodInfo),
// the Status a plugin returns, the one-method plugin interfaces (PreFilter,
// Filter, PreScore, Score, NormalizeScore), the CycleState carried through
// one scheduling cycle, and the Framework that runs a profile's plugins.
package framework
