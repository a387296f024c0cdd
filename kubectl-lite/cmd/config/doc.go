// Package config implements "kubectl-lite config view|get-contexts|
// current-context|use-context" on the kubeconfig kubectl would use.
package config
