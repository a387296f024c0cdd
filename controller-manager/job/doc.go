// Package job is kube's job controller: it runs a Job's pods (restartPolicy
// Never or OnFailure) up to parallelism at a time until completions of them
// succeed, replaces failed pods with an exponential back-off, and finishes
// the Job with condition Complete, or Failed with reason
// BackoffLimitExceeded (more failures than backoffLimit) or DeadlineExceeded
// (activeDeadlineSeconds passed), keeping status active / ready /
// succeeded / failed / startTime / completionTime up to date.
package job
