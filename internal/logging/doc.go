// Package logging sets up the structured logger (log/slog) every minik8s
// daemon uses: a level (from a --log-level name or kube's --v verbosity),
// a format (text or json), and the component attached once.
package logging
