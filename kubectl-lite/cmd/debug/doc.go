// Package debug implements "kubectl-lite debug POD": an ephemeral
// container added to a running pod through pods/ephemeralcontainers (a
// strategic-merge patch, as kubectl sends), optionally in a target
// container's process namespace, and attached to with -i.
package debug
