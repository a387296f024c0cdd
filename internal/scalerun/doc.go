// Package scalerun is the cluster-scale run of issue 30: the apiserver
// (embedded etcd, HTTPS, authentication and RBAC on, as shipped), the
// controller-manager and the scheduler as separate processes, and hollow
// nodes (bin/hollow-nodes, the kubelet's own node-status and pod code on
// the in-memory runtime) in two processes, the second holding the nodes that
// will be lost. It times each milestone: every node Ready; Deployments ×
// replicas applied until every pod is Running; a rolling update of all of
// them until every Deployment is updated and available; the second hollow
// process killed (SIGKILL) until its nodes are NotReady, their pods evicted
// and every Deployment available again on the nodes left. At the end it
// reads the apiserver's request latency p99 per verb from its /metrics
// (WATCH and CONNECT left out, as Kubernetes' API SLO leaves them out) and
// each process' CPU seconds and peak RSS from /proc.
//
// The shipped row runs every daemon with its default flags; the tuned row
// (Config.Tuned) lifts the apiserver's in-flight limits and raises the
// controller-manager's and scheduler's client QPS and the controllers'
// concurrency, and says so. Pods tolerate node.kubernetes.io/not-ready and
// unreachable for Config.TolerationSeconds (30 s; kube's default is 300 s),
// so the eviction milestone is bounded; the node monitor keeps its default
// grace period. The hollow nodes join in a ramp (hollow-nodes'
// --start-concurrency, Config.StartConcurrency and StartQPS, shared by the
// two processes), as nodes join a real cluster, in both rows.
package scalerun
