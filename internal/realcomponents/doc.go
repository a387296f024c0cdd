// Package realcomponents runs the real Kubernetes control-plane components
// (kube-scheduler and kube-controller-manager v1.37, built by
// internal/oracle) unchanged against the minik8s apiserver, with their
// default flags but for the kubeconfig and authentication wiring: TLS, RBAC
// as system:kube-scheduler and system:kube-controller-manager, protobuf as
// client-go defaults, leader election on. Nodes are simulated (Node objects,
// Lease heartbeats, pods reported Running), so no containers run.
//
// The tests check what a user of those components would see: a Deployment
// applied with the real kubectl becomes a ReplicaSet and Running pods bound
// by the real scheduler, the components are healthy, and their logs show
// no request for a kind the apiserver does not serve (404) or in an
// encoding it refuses (415).
//
// The other way round, minik8s' scheduler and controller-manager run
// against the real kube-apiserver v1.37 (on an embedded etcd of the
// test's own, with a kubeadm-like PKI, Node and RBAC authorization) as the
// users kube's bootstrap policy knows them by, and turn the same
// Deployment into Running pods.
//
// The package has no non-test code. Every test needs etcd and the oracle
// binaries and is skipped with -short.
package realcomponents
