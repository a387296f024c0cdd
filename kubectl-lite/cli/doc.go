// Package cli holds what every kubectl-lite command shares: the I/O streams,
// the global flags (--kubeconfig, --context, -n) and the client built from
// them, and kubectl's one-line error format.
package cli
