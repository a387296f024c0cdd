// Package printers compares minik8s' server-side tables with Kubernetes'
// own printers: for every case in its tests, the columns, cells and row
// conditions that apiserver/printers produces must equal those of
// k8s.io/kubernetes/pkg/printers/internalversion (what kube-apiserver
// serves), and kubectl-lite must print the resulting tables byte for byte
// as kubectl's table printer does. It is a module of its own so that
// k8s.io/kubernetes stays out of minik8s' dependency graph; `make test`
// runs it (with -mod=mod, so a dependency minik8s gains is resolved here
// too).
package printers
