// Package apply implements "kubectl-lite apply -f" (create, or a three-way
// strategic merge patch from the last-applied-configuration annotation) and
// "kubectl-lite create -f".
package apply
