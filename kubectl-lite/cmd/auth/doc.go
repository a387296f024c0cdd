// Package auth implements "kubectl-lite auth can-i" and "auth whoami":
// SelfSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview
// asked of the apiserver, printed as kubectl's pkg/cmd/auth prints them.
// With the global --as and --as-group flags they answer for another user.
package auth
