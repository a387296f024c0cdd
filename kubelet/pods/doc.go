// Package pods is the kubelet's pod manager: it watches the pods bound to
// its node, runs one worker per pod that makes containerd match the pod
// (sandbox and network, init containers in order, app containers with
// restart policy and CrashLoopBackOff, image pulls with ImagePullBackOff,
// probes, graceful deletion) and reports the pod's status through /status.
package pods
