// Package get implements "kubectl-lite get": lists or named objects of one or
// more types, as kubectl's tables, names, YAML or JSON.
package get
