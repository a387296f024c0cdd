// Package label implements "kubectl-lite label" and "annotate": add,
// overwrite (--overwrite) or remove ("key-") labels and annotations with a
// JSON merge patch of metadata.
package label
