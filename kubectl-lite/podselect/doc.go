// Package podselect picks what the streaming verbs (logs, attach, exec, cp,
// port-forward, debug) work on, as kubectl does: the pod named by "NAME",
// "pod/NAME" or a workload's "TYPE/NAME" (the first of its pods by name,
// found through the workload's matchLabels, with kubectl's "Found N pods"
// note; FirstPod serves a Service's selector the same way), and the
// container of that pod when none is given (the
// kubectl.kubernetes.io/default-container annotation, else the first, with
// kubectl's "Defaulted container" note). The notes go to the caller's
// error stream, so a quiet verb can discard them.
package podselect
