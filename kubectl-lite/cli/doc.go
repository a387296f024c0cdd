// Package cli holds what every kubectl-lite command shares: the I/O streams,
// the global flags (--kubeconfig, --context, -n) and the client built from
// them, kubectl's one-line error format and usage errors, and the command
// line --record writes.
package cli
