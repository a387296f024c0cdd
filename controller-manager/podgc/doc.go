// Package podgc is kube-controller-manager's pod garbage collector
// ("podgc"): every 20 seconds it force-deletes (grace period 0) the pods no
// kubelet will ever finish — pods bound to a node that no longer exists
// (after a 40 s quarantine and a GET confirming the node is gone),
// terminating pods never scheduled, terminating pods on a NotReady node
// tainted node.kubernetes.io/out-of-service — and the oldest terminated
// pods beyond --terminated-pod-gc-threshold. A pod still pending or running
// is first marked Failed (an orphan with kube's DisruptionTarget condition,
// reason DeletionByPodGC), since no kubelet will write its last status.
package podgc
