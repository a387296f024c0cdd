// Package benchvskube measures minik8s' apiserver and scheduler side by
// side with the real kube-apiserver and kube-scheduler (the oracle
// binaries scripts/oracle.sh builds) in one run, under the same load, and
// prints the figures as a table with ratios ours/kube.
//
// Every apiserver is a separate process serving HTTPS, with static-token
// authentication (the same --token-auth-file for all) and RBAC
// authorization: the load runs as a user who is neither an administrator
// nor a node and is allowed by a ClusterRoleBinding, the path users take.
// Ours runs as shipped (its embedded etcd inside the process, so its RSS
// includes etcd's) and once more with the tuned flags named in the table;
// kube-apiserver runs on an embedded etcd in this program's process (its
// RSS is kube-apiserver's alone). The apiservers run one after the other,
// each alone.
//
// Per apiserver: idle RSS; pod creates/s from 1 and from 64 clients
// (HTTP/1.1 keep-alive connections, JSON) until the pod count is reached;
// RSS after those pods; LIST latency p50/p99 of all of them from the
// watch cache (resourceVersion=0, JSON and protobuf) and as a consistent
// list (no resourceVersion); watch delivery latency (write to event
// received) with 1,000 watchers; RSS after all that. The schedulers: N
// Nodes and P pending pods on an apiserver, then the scheduler started;
// pods/s from its start until every pod is bound, and its CPU per pod.
//
// A request answered 429 (kube-apiserver's priority and fairness, our
// max-in-flight limits) is sent again after its Retry-After, as client-go
// does; the wait counts in its figure.
//
// Figures are reported, never asserted: a shared machine moves them.
package benchvskube
