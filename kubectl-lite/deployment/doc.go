// Package deployment reads what kubectl-lite's verbs about Deployments
// share (describe, rollout history and undo): the ReplicaSets a
// Deployment controls, as kubectl's deployment utilities find them.
package deployment
