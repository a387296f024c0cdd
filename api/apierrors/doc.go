// Package apierrors carries API failures as typed errors: a StatusError wraps
// the Kubernetes Status that the apiserver returns for every failed request,
// with constructors that produce Kubernetes' reasons, codes and messages and
// predicates (IsNotFound, IsConflict, ...) that clients use to decide.
package apierrors
