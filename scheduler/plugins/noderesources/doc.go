// Package noderesources holds NodeResourcesFit (the pod's requests fit the
// node's allocatable minus what its pods request; scores least-allocated
// nodes higher) and NodeResourcesBalancedAllocation (prefers nodes whose cpu
// and memory use stay balanced).
package noderesources
