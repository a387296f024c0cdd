// Package version implements "kubectl-lite version": the client's version
// and the server's /version.
package version
