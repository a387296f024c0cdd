// Package top implements "kubectl-lite top node" and "top pod": CPU and
// memory usage from the metrics.k8s.io API (served by a metrics server
// through the apiserver's aggregation layer), in kubectl top's table,
// sorting and messages.
package top
