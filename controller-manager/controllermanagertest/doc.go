// Package controllermanagertest is the controller-manager's test harness:
// it runs chosen controllers in-process against a real apiserver
// (apiservertest), with what stands in for the rest of the cluster in
// those tests: nodes whose Lease and Ready heartbeat a goroutine renews,
// pod status written as a kubelet would, and a simulated kubelet
// (RunKubelet) that binds pods to fake nodes and reports them Running, for
// workloads that need pods to run without containers (the fault suite's
// controller-manager kills too).
package controllermanagertest
