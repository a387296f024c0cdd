// Package exec implements "kubectl-lite exec": it runs a command in a
// container over the apiserver's WebSocket exec stream, with -i/-t for an
// interactive terminal, and exits with the remote command's exit code.
package exec
