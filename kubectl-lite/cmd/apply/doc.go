// Package apply implements "kubectl-lite apply -f" (create, or a three-way
// strategic merge patch from the last-applied-configuration annotation),
// "create -f" and "replace -f", each with --dry-run=client|server (a server
// dry run sends ?dryRun=All, so the server validates without persisting).
package apply
