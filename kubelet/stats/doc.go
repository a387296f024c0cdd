// Package stats measures the CPU and memory of the node, its pods and their
// containers from the cgroups the runtime puts them in, and renders them as
// the kubelet's /stats/summary (the statsapi Summary shape, k8s.io/kubelet's
// stats/v1alpha1 JSON) and /metrics/resource (the Prometheus text metrics
// metrics-server scrapes, with Kubernetes' metric and label names).
//
// Cumulative CPU time is read afresh on every request; the rate
// (usageNanoCores) is the change since the previous reading of the same
// cgroup, at least a second earlier, as cAdvisor's housekeeping gives it.
// Both cgroup v1 (cpuacct, memory hierarchies) and v2 (unified) are read.
package stats
