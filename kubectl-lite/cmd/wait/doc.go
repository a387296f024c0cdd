// Package wait implements "kubectl-lite wait": block until objects meet a
// condition, a jsonpath value, or are deleted.
package wait
