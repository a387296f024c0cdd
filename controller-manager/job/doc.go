// Package job is kube's job controller: it runs a Job's pods (restartPolicy
// Never or OnFailure) up to parallelism at a time until completions of them
// succeed, replaces failed pods with an exponential back-off, and finishes
// the Job with condition Complete, or Failed with reason
// BackoffLimitExceeded (more failures than backoffLimit) or DeadlineExceeded
// (activeDeadlineSeconds passed), keeping status active / ready /
// terminating / succeeded / failed / startTime / completionTime up to
// date. Pods carry the batch.kubernetes.io/job-tracking finalizer until
// they are counted through status.uncountedTerminatedPods (tracking.go),
// so each is counted exactly once. As in kube v1.37, a job that met its
// success criteria or failed first gets the interim SuccessCriteriaMet or
// FailureTarget condition, and Complete or Failed only once every pod is
// counted and none is terminating. A suspended job has no start time; a
// resumed one starts again. Jobs whose spec.managedBy names another
// controller are left to it. Indexed jobs name their pods JOB-INDEX-xxxxx
// and may limit failures per index (backoffLimitPerIndex,
// maxFailedIndexes, the FailIndex action; indexed.go) and succeed early by
// their success policy (successpolicy.go).
package job
