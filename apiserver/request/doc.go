// Package request describes an incoming API request as the rest of the
// apiserver sees it: which verb, group, version, resource, subresource,
// namespace and name a URL addresses (parsed once, in Kubernetes' rules), and
// who is asking. Both travel in the request context.
package request
