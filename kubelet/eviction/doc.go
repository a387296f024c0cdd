// Package eviction is the kubelet's eviction manager, as kube's
// pkg/kubelet/eviction: every monitoring period (10 s, kube's
// evictionMonitoringPeriod) it measures the node's active pods and evicts
// those that break a limit. Today it enforces local storage isolation for
// emptyDir volumes: a pod whose emptyDir holds more than its sizeLimit is
// evicted at once (a 1 s grace period), with kube's Warning Evicted event
// and status (phase Failed, reason Evicted, the message
// `Usage of EmptyDir volume "x" exceeds the limit "y". `) and, as kube's
// local storage eviction, no DisruptionTarget condition (kube adds one only
// for node-pressure evictions). Critical pods (static, mirror, priority
// system-critical and above) are never evicted.
//
// Usage is measured as du does (allocated blocks, hard links counted
// once) by walking the volume's directory, bounded: a walk stops as soon
// as the usage exceeds the limit, and after MaxEntries entries. Node
// pressure eviction (memory.available, nodefs.available thresholds) and
// container and pod ephemeral-storage limits are not implemented: the
// thresholds only feed the node's allocatable and pressure conditions
// (kubelet/nodestatus).
package eviction
