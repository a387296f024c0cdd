// Package review answers the create-only review kinds of
// authorization.k8s.io/v1 (SubjectAccessReview, LocalSubjectAccessReview,
// SelfSubjectAccessReview, SelfSubjectRulesReview) and
// authentication.k8s.io/v1 (TokenReview, SelfSubjectReview) with the same
// authenticator and authorizer that guard every request, as
// kube-apiserver's pkg/registry/authorization and authentication do. Who
// may create which review is the filter chain's business (RBAC: create on
// the review resource); a review only computes its status.
package review
