// Package plugins assembles the default scheduling profile: the in-tree
// filter and score plugins of the sub-packages, in kube-scheduler's order
// and with its default score weights.
package plugins
