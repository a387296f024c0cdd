// Package policy is the ValidatingAdmissionPolicy and
// MutatingAdmissionPolicy admission plugins: CEL validations of
// ValidatingAdmissionPolicies, and CEL mutations (apply configurations,
// JSON patches) of MutatingAdmissionPolicies, applied through their
// bindings to the requests both match, as kube-apiserver does.
//
// Expressions are compiled and evaluated by k8s.io/apiserver's CEL
// admission libraries (the Kubernetes CEL environment and libraries, the
// object, oldObject, request, params, namespaceObject and variables
// bindings, messageExpression, cost limits), so their results and messages
// are kube's. This package does the rest: reading policies, bindings and
// params from the watch caches, matching (matchConstraints, a binding's
// matchResources, paramRef), the validation actions Deny, Warn and Audit,
// and the failure policy. Compiled policies are cached by resourceVersion.
//
// It also compiles the expressions of policies and of webhooks'
// matchConditions when they are written (refused with kube's causes), and
// evaluates webhooks' matchConditions.
//
// Not done: status.typeChecking; a mutating policy's reinvocationPolicy
// IfNeeded (it is not run again after a webhook changes the object).
package policy
