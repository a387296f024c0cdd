//go:build tools

// Package kube pins the Kubernetes release whose binaries the tests use as
// oracles. It is a module of its own so that k8s.io/kubernetes never enters
// minik8s' own dependency graph; scripts/oracle.sh builds from it.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
