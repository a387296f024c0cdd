// Package delete implements "kubectl-lite delete": by type and name, by
// label selector or --all, or the objects of -f files.
package delete
