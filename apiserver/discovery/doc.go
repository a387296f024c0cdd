// Package discovery holds aggregated discovery (apidiscovery.k8s.io/v2,
// the APIGroupDiscoveryList kubectl and client-go ask /api and /apis for)
// as kube-apiserver v1.37 builds it: the document's types with
// Kubernetes' JSON field names and order, the conversion of a legacy
// APIResourceList into its resources (kube's
// ConvertGroupVersionIntoToDiscovery, used for local groups and for
// extension apiservers that answer only the legacy documents), the order
// of groups and versions by their APIServices' priorities, and the ETag.
//
// The document is data: the apiserver's HTTP layer (apiserver/server)
// negotiates and writes it, the aggregation layer (apiserver/aggregator)
// fetches the part extension apiservers serve.
package discovery
