// Package root builds the kubectl-lite command tree: the global flags, every
// verb, and the exit contract (one error line on stderr, exit code 1).
package root
