// Package root builds the kubectl-lite command tree: the global flags, every
// verb, and the exit contract (one error line on stderr and exit code 1, or
// the remote command's exit code for exec).
package root
