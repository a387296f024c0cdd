// Package oracle gives tests the real Kubernetes binaries (kubectl,
// kube-scheduler, kube-controller-manager, kube-apiserver) of the release
// pinned in the kube sub-module, and Helm (helm, at the version
// scripts/oracle.sh pins), built by scripts/oracle.sh into a cache outside
// the repository. Tests run them against minik8s and compare what
// users see; they are never shipped.
package oracle
