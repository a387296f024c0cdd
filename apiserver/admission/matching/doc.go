// Package matching decides which admission requests a webhook or an
// admission policy applies to, as kube-apiserver's admission predicates do:
// rules (operations, API groups, versions, resources and subresources with
// their wildcards, scope), resources equivalent under matchPolicy
// Equivalent, namespaceSelectors and objectSelectors, and the requests
// exempt from dynamic admission.
package matching
