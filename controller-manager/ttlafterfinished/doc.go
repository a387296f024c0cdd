// Package ttlafterfinished is kube-controller-manager's
// "ttl-after-finished" controller: a finished Job (Complete or Failed)
// with spec.ttlSecondsAfterFinished is deleted, with its pods (foreground
// propagation), once that many seconds have passed since it finished.
package ttlafterfinished
