// Package patch implements "kubectl-lite patch": a strategic merge, JSON
// merge or JSON patch sent to named objects.
package patch
