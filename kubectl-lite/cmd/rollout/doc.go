// Package rollout implements "kubectl-lite rollout status|history|undo|
// restart|pause|resume" for Deployments, with kubectl's client-side logic:
// status from the Deployment's status and conditions, history and undo from
// the ReplicaSets it controls and their revision annotations.
package rollout
