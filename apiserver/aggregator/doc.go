// Package aggregator is the apiserver's API aggregation layer
// (kube-aggregator): APIServices of apiregistration.k8s.io/v1 say which
// group/versions another server answers, and requests for them are
// reverse-proxied to that server's Service — to a ready endpoint of it —
// over TLS checked against the APIService's caBundle, presenting the
// front-proxy client certificate and the authenticated user in the
// X-Remote-User, X-Remote-Group and X-Remote-Extra- headers. The groups
// join the apiserver's discovery, and an availability loop keeps each
// APIService's Available condition (Local, Passed, ServiceNotFound,
// ServicePortError, EndpointsNotFound, MissingEndpoints,
// FailedDiscoveryCheck) with kube-aggregator's reasons and messages.
//
// The apiserver's own group/versions are registered as Local APIServices
// on start, with kube-apiserver's priorities (labelled
// kube-aggregator.kubernetes.io/automanaged=onstart), and each group
// version a CRD serves gets one (automanaged=true, priority 1000/100),
// deleted when no CRD serves it any more, as kube's crd-autoregister.
//
// For aggregated discovery (apiserver/discovery) the aggregator fetches
// each remote APIService's group version from its server after every
// availability check, its /apis in apidiscovery.k8s.io/v2 or else the
// legacy /apis/GROUP/VERSION, and reports it Stale, without resources,
// while the APIService is unavailable or the fetch fails.
//
// Unlike kube-apiserver without --enable-aggregator-routing, the proxy
// always dials an endpoint address, never the ClusterIP: the apiserver
// process has no kube-proxy rules to reach a ClusterIP through.
package aggregator
